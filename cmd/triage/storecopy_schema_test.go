package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/clients/tickets"
	"triage/internal/ledger"
	"triage/internal/store"
	"triage/internal/testkit/pgtest"
)

// What these tests hold the copy to: every table and column of a freshly
// migrated SQLite ledger and ticket file, and of a freshly migrated store,
// is either copied or in the copy's notCopied list with its reason; and
// every copied column arrives with its value.

// column is one column of a SQLite table (PRAGMA table_info).
type column struct {
	name, typ string
	dflt      sql.NullString
}

// sqliteFile is a freshly migrated SQLite file of an installation.
type sqliteFile struct {
	name    string // "ledger" or "tickets", as in copiedInfo.File
	path    string
	migrate func(context.Context, *store.DB) error
}

func freshFiles(t *testing.T) []sqliteFile {
	t.Helper()
	dir := t.TempDir()
	files := []sqliteFile{
		{"ledger", filepath.Join(dir, "ledger.db"), ledger.Migrate},
		{"tickets", filepath.Join(dir, "tickets.db"), tickets.Migrate},
	}
	for _, f := range files {
		db := openSQLite(t, f.path)
		if err := f.migrate(context.Background(), db); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	return files
}

func openSQLite(t *testing.T, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// sqliteTables returns the tables of db with their columns, leaving out
// SQLite's own (sqlite_sequence).
func sqliteTables(t *testing.T, db *store.DB) map[string][]column {
	t.Helper()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]column{}
	for _, n := range names {
		rows, err := db.QueryContext(ctx, `SELECT name, type, dflt_value FROM pragma_table_info(?) ORDER BY cid`, n)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c column
			if err := rows.Scan(&c.name, &c.typ, &c.dflt); err != nil {
				t.Fatal(err)
			}
			out[n] = append(out[n], c)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// postgresTables returns the tables of the store's schema: column -> type.
func postgresTables(t *testing.T, db *store.DB) map[string]map[string]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT c.table_name, c.column_name, c.data_type
		FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var tbl, col, typ string
		if err := rows.Scan(&tbl, &col, &typ); err != nil {
			t.Fatal(err)
		}
		if out[tbl] == nil {
			out[tbl] = map[string]string{}
		}
		out[tbl][col] = typ
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// copied returns the tables the copy takes from file: table -> columns.
func copied(file string) map[string][]string {
	out := map[string][]string{}
	for _, c := range copiedTables() {
		if file == "" || c.File == file {
			out[c.Table] = c.Cols
		}
	}
	return out
}

// checkCovered reports each table and column of schema (table -> column
// names) that the copy neither takes nor names in notCopied, and each
// column it takes that schema lacks.
func checkCovered(t *testing.T, where string, schema map[string][]string, take map[string][]string) {
	t.Helper()
	for tbl, cols := range schema {
		if _, ok := notCopied[tbl]; ok {
			continue
		}
		got, ok := take[tbl]
		if !ok {
			t.Errorf("%s: table %s is not copied: add it to ledgerTables or ticketTables, or to notCopied with why", where, tbl)
			continue
		}
		for _, c := range cols {
			if _, ok := notCopied[tbl+"."+c]; !ok && !slices.Contains(got, c) {
				t.Errorf("%s: column %s.%s is not copied: add it to the table's columns, or to notCopied with why", where, tbl, c)
			}
		}
		for _, c := range got {
			if !slices.Contains(cols, c) {
				t.Errorf("%s: the copy takes %s.%s, which is not there", where, tbl, c)
			}
		}
	}
	for tbl := range take {
		if _, ok := schema[tbl]; !ok {
			t.Errorf("%s: the copy takes table %s, which is not there", where, tbl)
		}
	}
}

func columnNames(cols []column) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.name)
	}
	return out
}

// TestCopyCoversSQLiteSchema: every table and column of the SQLite ledger
// and ticket files, as every migration step leaves them, is copied or
// deliberately left out.
func TestCopyCoversSQLiteSchema(t *testing.T) {
	for _, f := range freshFiles(t) {
		db := openSQLite(t, f.path)
		schema := map[string][]string{}
		for tbl, cols := range sqliteTables(t, db) {
			schema[tbl] = columnNames(cols)
		}
		db.Close()
		checkCovered(t, f.name+" file", schema, copied(f.name))
	}
}

// preparedPostgres is a fresh PostgreSQL store with the copy's schema
// (closed when the test ends) and its tables' columns.
func preparedPostgres(t *testing.T) (*store.DB, map[string]map[string]string) {
	t.Helper()
	ctx := context.Background()
	dst, err := store.Open(ctx, pgtest.URL(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	if err := prepareStore(ctx, dst); err != nil {
		t.Fatal(err)
	}
	return dst, postgresTables(t, dst)
}

// TestCopyCoversPostgresSchema: every table and column of a migrated store
// is filled by the copy or deliberately left out (a table only the store
// has, such as the model budget, too), and notCopied names nothing that
// exists in neither schema.
func TestCopyCoversPostgresSchema(t *testing.T) {
	_, pg := preparedPostgres(t)
	schema := map[string][]string{}
	for tbl, cols := range pg {
		for c := range cols {
			schema[tbl] = append(schema[tbl], c)
		}
	}
	checkCovered(t, "store", schema, copied(""))

	exists := map[string]bool{}
	for tbl, cols := range schema {
		exists[tbl] = true
		for _, c := range cols {
			exists[tbl+"."+c] = true
		}
	}
	for _, f := range freshFiles(t) {
		db := openSQLite(t, f.path)
		for tbl, cols := range sqliteTables(t, db) {
			exists[tbl] = true
			for _, c := range cols {
				exists[tbl+"."+c.name] = true
			}
		}
		db.Close()
	}
	for name, why := range notCopied {
		if !exists[name] {
			t.Errorf("notCopied names %s, which neither schema has", name)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("notCopied: %s has no reason", name)
		}
	}
}

// value is a value for column c of table tbl in row r (c the i-th
// column), of the store's column type typ: never a column default (zero, the
// empty string, "reply", "open"), different in every row and column, beyond 32 bits in
// BIGINT columns, non-ASCII in text, NUL and invalid UTF-8 in bytes (which
// row 1 holds as text, as some old SQLite rows do).
func value(t *testing.T, tbl, c, typ string, r, i int) any {
	switch typ {
	case "bigint":
		return int64(5_000_000_000 + 1000*r + i)
	case "integer":
		return int64(100*(r+1) + i)
	case "double precision":
		return float64(r+1) + float64(i)/8
	case "bytea":
		b := append([]byte(fmt.Sprintf("%s.%s/%d ", tbl, c, r)), 0, 0xff)
		if r == 1 {
			return string(b)
		}
		return b
	case "text":
		return fmt.Sprintf("%s.%s/%d zażółć", tbl, c, r)
	}
	t.Fatalf("%s.%s: no test value for type %q", tbl, c, typ)
	return nil
}

// norm makes values read back from either backend comparable.
func norm(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case int:
		return int64(x)
	case int32:
		return int64(x)
	}
	return v
}

// foreignKeys returns the columns of tbl that reference another table:
// column -> [table, column].
func foreignKeys(t *testing.T, db *store.DB, tbl string) map[string][2]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT "from", "table", "to" FROM pragma_foreign_key_list(?)`, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][2]string{}
	for rows.Next() {
		var from, ref string
		var to sql.NullString
		if err := rows.Scan(&from, &ref, &to); err != nil {
			t.Fatal(err)
		}
		if !to.Valid {
			t.Fatalf("%s.%s references %s without naming a column", tbl, from, ref)
		}
		out[from] = [2]string{ref, to.String}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fillEvery writes n rows into every table of the file db that is copied,
// every column (those not copied too) set to a value that is not its
// default; a column referencing another table takes that table's value in
// the same row.
func fillEvery(t *testing.T, db *store.DB, tables map[string][]column, pg map[string]map[string]string, n int) {
	t.Helper()
	ctx := context.Background()
	var order []string
	fks := map[string]map[string][2]string{}
	for tbl := range tables {
		if _, ok := notCopied[tbl]; ok {
			continue
		}
		order = append(order, tbl)
		fks[tbl] = foreignKeys(t, db, tbl)
	}
	// Referenced tables first.
	sort.Slice(order, func(a, b int) bool {
		if la, lb := len(fks[order[a]]), len(fks[order[b]]); la != lb {
			return la < lb
		}
		return order[a] < order[b]
	})
	written := map[string][]map[string]any{}
	for _, tbl := range order {
		cols := tables[tbl]
		for r := range n {
			row := map[string]any{}
			args := make([]any, len(cols))
			for i, c := range cols {
				var v any
				if fk, ok := fks[tbl][c.name]; ok {
					if len(written[fk[0]]) <= r {
						t.Fatalf("%s.%s references %s, not written yet", tbl, c.name, fk[0])
					}
					v = written[fk[0]][r][fk[1]]
				} else {
					typ, ok := pg[tbl][c.name]
					if !ok {
						typ = map[string]string{"INTEGER": "bigint", "REAL": "double precision", "BLOB": "bytea"}[strings.ToUpper(c.typ)]
						if typ == "" {
							typ = "text"
						}
					}
					v = value(t, tbl, c.name, typ, r, i)
				}
				if c.dflt.Valid && fmt.Sprint(norm(v)) == strings.Trim(c.dflt.String, "'") {
					t.Fatalf("%s.%s row %d: %v is the column's default", tbl, c.name, r, v)
				}
				row[c.name], args[i] = v, v
			}
			written[tbl] = append(written[tbl], row)
			q := `INSERT INTO ` + tbl + ` (` + strings.Join(columnNames(cols), ", ") + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
			if _, err := db.ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("%s row %d: %v", tbl, r, err)
			}
		}
	}
}

// readAll returns every row of cols of tbl, each value normalised, in a
// fixed order.
func readAll(t *testing.T, db *store.DB, tbl string, cols []string) [][]any {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT `+strings.Join(cols, ", ")+` FROM `+tbl)
	if err != nil {
		t.Fatalf("%s: read %s: %v", db.Name(), tbl, err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i := range vals {
			vals[i] = norm(vals[i])
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(a, b int) bool { return fmt.Sprint(out[a]) < fmt.Sprint(out[b]) })
	return out
}

// TestFromSQLiteEveryColumn fills every column of every table of fresh
// SQLite files with a value that is not its default, copies them into a
// real PostgreSQL store and reads every column back from both: each
// column the SQLite schema has (but those notCopied names) arrives with
// its value, whatever the copy's own lists say.
func TestFromSQLiteEveryColumn(t *testing.T) {
	ctx := context.Background()
	dst, pg := preparedPostgres(t)
	const n = 3
	files := freshFiles(t)
	schemas := map[string]map[string][]column{}
	for _, f := range files {
		db := openSQLite(t, f.path)
		schemas[f.name] = sqliteTables(t, db)
		fillEvery(t, db, schemas[f.name], pg, n)
		db.Close()
	}
	if _, err := copyFromSQLite(ctx, dst, files[0].path, files[1].path); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		src := openSQLite(t, f.path)
		for tbl, cols := range schemas[f.name] {
			if _, ok := notCopied[tbl]; ok {
				continue
			}
			var list []string
			for _, c := range columnNames(cols) {
				if _, ok := notCopied[tbl+"."+c]; !ok {
					list = append(list, c)
				}
			}
			want := readAll(t, src, tbl, list)
			if len(want) != n {
				t.Fatalf("%s file: %s has %d rows, want %d", f.name, tbl, len(want), n)
			}
			if _, ok := pg[tbl]; !ok {
				t.Errorf("%s: the store has no such table", tbl)
				continue
			}
			var have []string
			for _, c := range list {
				if _, ok := pg[tbl][c]; ok {
					have = append(have, c)
				} else {
					t.Errorf("%s.%s: the store has no such column", tbl, c)
				}
			}
			if len(have) != len(list) {
				continue
			}
			if diff := cmp.Diff(want, readAll(t, dst, tbl, list)); diff != "" {
				t.Errorf("%s after the copy (-sqlite +postgres):\n%s", tbl, diff)
			}
		}
		src.Close()
	}
}
