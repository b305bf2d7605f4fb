package model

import (
	"os"
	"testing"

	"triage/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
