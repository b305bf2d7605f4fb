package e2e

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"triage/instructions"
)

// instructionsWithoutMCP writes the built-in instructions into a directory
// without the MCP binding (search_manual) and the scenario declaring it.
func instructionsWithoutMCP(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	err := fs.WalkDir(instructions.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "scenarios/product-question.md" {
			return err
		}
		data, err := fs.ReadFile(instructions.FS, p)
		if err != nil {
			return err
		}
		text := string(data)
		if p == "tools.yaml" {
			start := strings.Index(text, "  search_manual:")
			if start < 0 {
				b.Fatal("tools.yaml binds no search_manual")
			}
			text = text[:start]
		}
		out := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(text), 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkProcessOneEmailMCP: one email (a warranty claim, which calls no
// manual) through the built `triage process`, wall time from start to exit,
// with the built-in instructions (the manuals MCP server bound) and without
// the MCP binding: wall time from start to exit and the process's CPU time
// (user + system; the wall time of a one-email run is mostly the fsyncs of
// the ticket store and the outbox). MCP servers start on first use, so the
// binding costs nothing here (target: within 1.3x).
//
//	go test -run '^$' -bench ProcessOneEmailMCP -benchtime 20x ./e2e
func BenchmarkProcessOneEmailMCP(b *testing.B) {
	bin := triageBinary(b)
	dir := benchDir(b)
	if err := os.WriteFile(filepath.Join(dir, "one.eml"), []byte(smallEmail(0)), 0o644); err != nil {
		b.Fatal(err)
	}
	noMCP := instructionsWithoutMCP(b)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"manuals-bound", nil},
		{"no-mcp", []string{"--instructions", noMCP}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total, cpu time.Duration
			for i := range b.N {
				os.RemoveAll(filepath.Join(dir, "outbox"))
				os.Remove(filepath.Join(dir, "tickets.db"))
				args := append([]string{"process", "--offline", "--warranty-csv", "warranty.csv", "--tickets-db", "tickets.db", "--outbox", "outbox"}, c.args...)
				cmd := exec.Command(bin, append(args, "one.eml")...)
				cmd.Dir = dir
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
				start := time.Now()
				out, err := cmd.CombinedOutput()
				total += time.Since(start)
				if err != nil {
					b.Fatalf("run %d: %v\n%s", i, err, out)
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
				}
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "wall-ms/run")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/run")
		})
	}
}
