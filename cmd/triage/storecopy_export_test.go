package storecopy

// Copied is a table FromSQLite copies: the file it is read from
// ("ledger" or "tickets") and the columns it takes.
type Copied struct {
	File, Table string
	Cols        []string
}

// CopiedTables lists the tables FromSQLite copies.
func CopiedTables() []Copied {
	var out []Copied
	for _, f := range []struct {
		file   string
		tables []table
	}{{"ledger", ledgerTables}, {"tickets", ticketTables}} {
		for _, t := range f.tables {
			out = append(out, Copied{File: f.file, Table: t.name, Cols: t.cols})
		}
	}
	return out
}

// NotCopied is what the copy leaves out on purpose, with why.
var NotCopied = notCopied
