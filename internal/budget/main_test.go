package budget

import (
	"os"
	"testing"

	"triage/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
