package console

import (
	"os"
	"testing"

	"triage/internal/testkit/pgtest"
)

// Tests on PostgreSQL get a database of their own (pgtest.Each).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
