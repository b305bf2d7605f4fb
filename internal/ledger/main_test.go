package ledger

import (
	"os"
	"testing"

	"triage/internal/testkit/pgtest"
)

// The store tests run on SQLite and on a real PostgreSQL (pgtest.Each).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
