package main

// copiedInfo is a table copyFromSQLite copies: the file it is read from
// ("ledger" or "tickets") and the columns it takes.
type copiedInfo struct {
	File, Table string
	Cols        []string
}

// copiedTables lists the tables copyFromSQLite copies.
func copiedTables() []copiedInfo {
	var out []copiedInfo
	for _, f := range []struct {
		file   string
		tables []tableCopy
	}{{"ledger", ledgerTables}, {"tickets", ticketTables}} {
		for _, t := range f.tables {
			out = append(out, copiedInfo{File: f.file, Table: t.name, Cols: t.cols})
		}
	}
	return out
}
