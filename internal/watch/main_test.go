package watch

import (
	"os"
	"testing"

	"triage/internal/testkit/pgtest"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m)) // the tests with several watchers use PostgreSQL
}
