package language

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

const email = `Dzień dobry,
mój ekspres do kawy (numer seryjny SN-48213-PL) od wczoraj nie grzeje wody,
a na wyświetlaczu pojawia się błąd E04. Kupiłem go w marcu w Państwa sklepie.
Czy mogę oddać go do naprawy gwarancyjnej? Paragon mam w załączniku.
Pozdrawiam serdecznie,
Jan Kowalski`

// BenchmarkStartup measures what the detector costs a fresh process: New
// and the first Detect, which loads the models of every configured
// language. Each iteration runs the test binary anew (TestStartupChild);
// it reports the child's wall time, its CPU time (user and system), its
// peak RSS and the heap the models hold. With -modfile=out/lingua-trim/go.mod
// (after make build) it measures the models as the shipped binary links
// them (stored uncompressed), without it as lingua-go ships them.
func BenchmarkStartup(b *testing.B) {
	var rss, heap int64
	var wall, cpu time.Duration
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartupChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LANGUAGE_STARTUP_CHILD=1")
		start := time.Now()
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		wall += time.Since(start)
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = max(rss, ru.Maxrss*1024)
		}
		var h int64
		if _, err := fmt.Sscanf(lastLine(string(out), "heap "), "heap %d", &h); err == nil {
			heap = max(heap, h)
		}
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "ms/start")
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/start")
	b.ReportMetric(float64(rss)/(1<<20), "MiB-peak-rss")
	b.ReportMetric(float64(heap)/(1<<20), "MiB-models-heap")
}

func lastLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestStartupChild is BenchmarkStartup's child: it does nothing in a
// normal test run.
func TestStartupChild(t *testing.T) {
	if os.Getenv("LANGUAGE_STARTUP_CHILD") == "" {
		t.Skip("run by BenchmarkStartup")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Detect(email); got != "pl" {
		t.Fatalf("Detect = %s", got)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	fmt.Printf("heap %d\n", after.HeapAlloc-before.HeapAlloc)
}

// BenchmarkDetect is the per-message cost once the models are loaded: a
// typical email, a short one, and a text of MaxBytes or more, each judged
// anew (a word in letters ahead of it, letterName, makes each text one the
// Detector has not seen), a text judged again (remembered), and texts that
// differ only in a number (remembered: lingua does not read digits).
func BenchmarkDetect(b *testing.B) {
	d, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	d.Detect(email) // load the models
	for _, bc := range []struct{ name, text string }{
		{"email", email},
		{"short", "Thanks, pushed."},
		{"huge", strings.Repeat(email+"\n", 4000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			texts := make([]string, b.N)
			for i := range texts {
				texts[i] = letterName(i) + " " + bc.text
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				d.Detect(texts[i])
			}
		})
	}
	b.Run("remembered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d.Detect(email)
		}
	})
	b.Run("numbered", func(b *testing.B) {
		texts := make([]string, b.N)
		for i := range texts {
			texts[i] = fmt.Sprint(i, " ", email)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			d.Detect(texts[i])
		}
	})
}
