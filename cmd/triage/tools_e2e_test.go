package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"triage"
	"triage/internal/processor"
	"triage/internal/testkit/mcptest"
)

// writeEML writes a plain-text customer email and returns its path.
func writeEML(t *testing.T, dir, name, from, subject, body string) string {
	t.Helper()
	raw := fmt.Sprintf("From: %s\r\nTo: serwis@example.com\r\nSubject: %s\r\nDate: Tue, 17 Nov 2026 09:00:00 +0000\r\n"+
		"Message-ID: <%s@mail.example.com>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"+
		"Content-Transfer-Encoding: 8bit\r\n\r\n%s\r\n", from, subject, name, strings.ReplaceAll(body, "\n", "\r\n"))
	p := filepath.Join(dir, name+".eml")
	if err := os.WriteFile(p, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func callNamed(o processor.Outcome, name string) (int, bool) {
	for i, c := range o.FunctionCalls {
		if c.Name == name {
			return i, true
		}
	}
	return -1, false
}

// An MCP server that is not ours, end to end through `triage process`: the
// npm filesystem server over stdio, bound in testdata/kb/tools.yaml as
// read_text_file, driven by the offline model. One email reads a document
// and quotes it; another asks for one that does not exist, and the server's
// error reaches the model as a function error while the email is still
// answered.
func TestProcessWithNPMFilesystemServer(t *testing.T) {
	server := mcptest.FilesystemServer(t)
	kb := t.TempDir()
	if err := os.WriteFile(filepath.Join(kb, "regulamin"), []byte("Zwroty przyjmujemy w ciągu 30 dni od zakupu.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TRIAGE_TEST_MCP_SERVER", server[0])
	t.Setenv("TRIAGE_TEST_MCP_ARG", kb)
	t.Setenv("TRIAGE_TEST_STATE", "") // the binding passes it; only the crashing server reads it

	dir := t.TempDir()
	found := writeEML(t, dir, "kb-found", "Ola Nowak <ola@example.pl>", "Pytanie o regulamin",
		"Dzień dobry,\nw jakim terminie mogę zwrócić towar? Proszę o regulamin.\nOla")
	missing := writeEML(t, dir, "kb-missing", "Piotr Lis <piotr@example.pl>", "policy nieistniejacydokument",
		"Dzień dobry, proszę o ten dokument.\nPiotr")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--instructions", "testdata/kb",
		"--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"),
		"--outbox", filepath.Join(dir, "outbox"), "--concurrency", "2", found, missing)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 2 {
		t.Fatalf("%d outcomes", len(outs))
	}

	o := outs[0]
	i, ok := callNamed(o, "read_text_file")
	if o.Status != triage.StatusReplied || o.Scenario != "kb-question" || !ok {
		t.Fatalf("found: status %s scenario %s calls %+v", o.Status, o.Scenario, o.FunctionCalls)
	}
	rc := o.FunctionCalls[i]
	if text, _ := rc.Result["text"].(string); !rc.OK || rc.Args["path"] != "regulamin" || !strings.Contains(text, "30 dni") {
		t.Errorf("found: read_text_file %+v", rc)
	}
	checkReply(t, "kb-found", o, []string{"Zwroty przyjmujemy w ciągu 30 dni od zakupu."})

	o = outs[1]
	i, ok = callNamed(o, "read_text_file")
	if o.Status != triage.StatusReplied || !ok {
		t.Fatalf("missing: status %s calls %+v", o.Status, o.FunctionCalls)
	}
	rc = o.FunctionCalls[i]
	if rc.OK || rc.Blocked || rc.Error == nil || rc.Error.Code != "client_error" || !strings.Contains(rc.Error.Message, "nieistniejacydokument") {
		t.Errorf("missing: want the server's error as a client_error, got %+v (error %+v)", rc, rc.Error)
	}
}

// A stdio MCP server killed while an email's call is in flight: that call
// fails at once as unavailable (the email is still handled, never hangs),
// and the next call, for the next email, runs on a restarted server.
func TestProcessMCPServerKilledMidRun(t *testing.T) {
	state := t.TempDir()
	t.Setenv("TRIAGE_TEST_MCP_SERVER", os.Args[0])
	t.Setenv("TRIAGE_TEST_MCP_ARG", "mcp-crash-server")
	t.Setenv("TRIAGE_TEST_STATE", state)

	killed := make(chan int, 1)
	done := make(chan struct{})
	defer close(done)
	go func() { // kill the server once it is blocked in its first call
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			b, err := os.ReadFile(filepath.Join(state, "pid"))
			if err != nil {
				continue
			}
			pid, _ := strconv.Atoi(string(b))
			syscall.Kill(pid, syscall.SIGKILL)
			killed <- pid
			return
		}
	}()

	dir := t.TempDir()
	first := writeEML(t, dir, "crash-1", "Ola <ola@example.pl>", "Pytanie o regulamin", "Proszę o regulamin.")
	second := writeEML(t, dir, "crash-2", "Jan <jan@example.pl>", "Pytanie o regulamin", "Proszę o regulamin.")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "--instructions", "testdata/kb",
		"--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"),
		"--outbox", filepath.Join(dir, "outbox"), "--concurrency", "1", "-v", first, second)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var pid int
	select {
	case pid = <-killed:
	default:
		t.Fatal("the server never blocked in a call")
	}
	outs := decodeOutcomes(t, stdout)
	if len(outs) != 2 || outs[0].Status != triage.StatusReplied || outs[1].Status != triage.StatusReplied {
		t.Fatalf("outcomes: %+v", outs)
	}
	c := outs[0].FunctionCalls[0]
	if c.Name != "read_text_file" || c.OK || c.Error == nil || c.Error.Code != "unavailable" {
		t.Errorf("the call in flight when the server died: %+v (error %+v), want unavailable", c, c.Error)
	}
	i, ok := callNamed(outs[1], "read_text_file")
	if !ok {
		t.Fatalf("second email: no read_text_file call: %+v", outs[1].FunctionCalls)
	}
	c = outs[1].FunctionCalls[i]
	text, _ := c.Result["text"].(string)
	if !c.OK || !strings.HasPrefix(text, "served by pid ") || text == fmt.Sprintf("served by pid %d", pid) {
		t.Errorf("second email: %+v, want an answer from a restarted server (the killed one was %d)", c, pid)
	}
	if !strings.Contains(stderr, "session lost") {
		t.Errorf("the log does not say the session was lost:\n%s", stderr)
	}
}

// copyKB copies testdata/kb to a temp dir, with edit applied to the scenario.
func copyKB(t *testing.T, edit func(string) string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"main.md", "tools.yaml", "scenarios/kb-question.md"} {
		b, err := os.ReadFile(filepath.Join("testdata/kb", f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.HasPrefix(f, "scenarios/") {
			s = edit(s)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// `triage check` always starts MCP servers and checks every declaration
// against the server's inputSchema; process and watch start a server on
// the first call of one of its tools, check that tool's declaration then,
// and go on without a server they cannot reach.
func TestCheckMCPServers(t *testing.T) {
	t.Setenv("TRIAGE_TEST_MCP_SERVER", os.Args[0])
	t.Setenv("TRIAGE_TEST_MCP_ARG", "mcp-crash-server")
	t.Setenv("TRIAGE_TEST_STATE", t.TempDir())

	code, stdout, stderr := runCLI(t, "", "check", "--instructions", "testdata/kb")
	if code != 0 || !strings.Contains(stdout, "MCP servers: 1 reachable") {
		t.Errorf("check: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// A declaration that does not fit the server's inputSchema: a start-up
	// error for check, naming the file, tool and parameter. process starts
	// the server on the tool's first call, which checks the declaration
	// first: the misfit fails that call, named the same way
	// (internal/dispatcher TestLazyStart); the email is still answered.
	bad := copyKB(t, func(s string) string {
		return strings.Replace(s, "        path:\n          type: string\n          minLength: 1", "        path:\n          type: integer", 1)
	})
	dir := t.TempDir()
	eml := writeEML(t, dir, "kb", "Ola <ola@example.pl>", "Pytanie o regulamin", "Proszę o regulamin.")
	const misfit = "tools: tools.yaml: read_text_file: declared in scenarios/kb-question.md"
	const why = "parameter path: declared type integer, the server wants [string]"
	code, _, stderr = runCLI(t, "", "check", "--instructions", bad)
	if code != 2 || !strings.Contains(stderr, misfit) || !strings.Contains(stderr, why) {
		t.Errorf("check with a misfit declaration: exit %d, stderr %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "process", "--json", "--instructions", bad, "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t.db"), "--outbox", filepath.Join(dir, "outbox"), eml)
	if code != 0 {
		t.Fatalf("process with a misfit declaration: exit %d, stderr %s", code, stderr)
	}
	o := decodeOutcomes(t, stdout)[0]
	if i, ok := callNamed(o, "read_text_file"); ok && (o.FunctionCalls[i].Error == nil ||
		!strings.Contains(o.FunctionCalls[i].Error.Message, misfit) || !strings.Contains(o.FunctionCalls[i].Error.Message, why)) {
		t.Errorf("process with a misfit declaration: the call did not fail naming the misfit: %+v", o.FunctionCalls)
	}

	// A server that cannot be started: check fails, process goes on (the
	// call fails as unavailable; the customer still gets an answer).
	t.Setenv("TRIAGE_TEST_MCP_SERVER", filepath.Join(t.TempDir(), "no-such-server"))
	code, _, stderr = runCLI(t, "", "check", "--instructions", "testdata/kb")
	if code != 2 || !strings.Contains(stderr, "tools: tools.yaml: read_text_file: mcp: server no-such-server: start") {
		t.Errorf("check with an unreachable server: exit %d, stderr %s", code, stderr)
	}
	// Another outbox: the email answered above would be that reply again,
	// without running anything.
	code, stdout, stderr = runCLI(t, "", "process", "--json", "--instructions", "testdata/kb", "--warranty-csv", "../../examples/warranty.csv",
		"--tickets-db", filepath.Join(dir, "t2.db"), "--outbox", filepath.Join(dir, "outbox2"), eml)
	if code != 0 {
		t.Fatalf("process with an unreachable server: exit %d, stderr %s", code, stderr)
	}
	o = decodeOutcomes(t, stdout)[0]
	if i, ok := callNamed(o, "read_text_file"); !ok || o.FunctionCalls[i].Error == nil || o.FunctionCalls[i].Error.Code != "unavailable" {
		t.Errorf("process with an unreachable server: %+v", o.FunctionCalls)
	}
}

// An HTTP tool no Go code knows about, end to end through `triage process`:
// testdata/orders binds get_order_status to an orders service (httptest)
// with a token from ${VAR}; the offline model asks for the order number of
// the subject. A found order reaches the model as the service's JSON; a 404
// as a client_error naming the status; the token is sent, never printed.
func TestProcessWithHTTPTool(t *testing.T) {
	const token = "orders-T0KEN-1"
	var mu sync.Mutex // the two emails run concurrently
	var gotAuth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path != "/orders/20261117" {
			http.Error(w, `{"error":"no such order"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"order_id":"20261117","status":"shipped","delivery_date":"2026-11-20"}`)
	}))
	defer srv.Close()
	t.Setenv("TRIAGE_TEST_ORDERS_URL", srv.URL)
	t.Setenv("TRIAGE_TEST_ORDERS_TOKEN", token)

	dir := t.TempDir()
	found := writeEML(t, dir, "order-found", "Ola <ola@example.pl>", "Order 20261117", "Where is my order?")
	missing := writeEML(t, dir, "order-missing", "Jan <jan@example.pl>", "Order 99999999", "Where is my order?")
	code, stdout, stderr := runCLI(t, "", "process", "--json", "-v", "--instructions", "testdata/orders",
		"--warranty-csv", "../../examples/warranty.csv", "--tickets-db", filepath.Join(dir, "t.db"),
		"--outbox", filepath.Join(dir, "outbox"), found, missing)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	outs := decodeOutcomes(t, stdout)
	i, ok := callNamed(outs[0], "get_order_status")
	if !ok || !outs[0].FunctionCalls[i].OK || outs[0].FunctionCalls[i].Result["status"] != "shipped" || outs[0].Status != triage.StatusReplied {
		t.Errorf("found: %+v", outs[0].FunctionCalls)
	}
	i, ok = callNamed(outs[1], "get_order_status")
	if !ok || outs[1].FunctionCalls[i].Error == nil || outs[1].FunctionCalls[i].Error.Code != "client_error" ||
		!strings.Contains(outs[1].FunctionCalls[i].Error.Message, "404 Not Found") || outs[1].Status != triage.StatusReplied {
		t.Errorf("missing: %+v", outs[1].FunctionCalls)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gotAuth) != 2 {
		t.Errorf("the service was called %d times, want 2", len(gotAuth))
	}
	for _, a := range gotAuth {
		if a != "Bearer "+token {
			t.Errorf("the service got Authorization %q", a)
		}
	}
	if strings.Contains(stdout+stderr, token) {
		t.Error("the token was printed")
	}
}
