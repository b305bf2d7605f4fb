package instructions_test

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	embedded "triage/instructions"
	"triage/internal/instructions"
	"triage/internal/testkit/toolstest"
)

var builtins = []string{"check_warranty", "create_ticket", "send_email", "notify_staff"}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestShipped(t *testing.T) {
	ts, err := instructions.LoadTools(embedded.FS, instructions.ToolsConfig{Builtins: builtins})
	if err != nil {
		t.Fatal(err)
	}
	set, err := instructions.LoadScenarios(embedded.FS, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Check(set); err != nil {
		t.Fatal(err)
	}
	// The dispatcher's guardrails, as policies.
	cw, ct, se := ts.Get("check_warranty"), ts.Get("create_ticket"), ts.Get("send_email")
	if cw.Args["serial_number"].From != instructions.FromSerialsOrAttachments || ct.Args["serial_number"].From != instructions.FromSerialsOrAttachments {
		t.Errorf("check_warranty.serial_number from %q", cw.Args["serial_number"].From)
	}
	if ct.Args["customer_email"].From != instructions.FromSender || !ct.Effect || ct.Limit(24) != 1 {
		t.Errorf("create_ticket = %+v", ct)
	}
	want := []instructions.Requirement{{Call: "check_warranty", ResultOneOf: []map[string]any{{"status": "valid"}, {"decision": map[string]any{"basis": "statutory"}}},
		Same: []string{"serial_number"}}}
	if diff := cmp.Diff(want, ct.Requires); diff != "" {
		t.Errorf("create_ticket.requires (-want +got):\n%s", diff)
	}
	if se.Args["to"].From != instructions.FromReplyTo || !se.Final || !se.Effect {
		t.Errorf("send_email = %+v", se)
	}
	// The read-only look-ups may run at once; the effects never.
	for name, want := range map[string]bool{"check_warranty": true, "search_manual": true, "create_ticket": false, "send_email": false, "notify_staff": false} {
		if got := ts.Get(name).Parallel; got != want {
			t.Errorf("%s: parallel %v, want %v", name, got, want)
		}
	}
	// The escalation's "staff first" rule is a declared policy too.
	wantSend := []instructions.Requirement{{Call: "notify_staff", IfDeclared: true}}
	if diff := cmp.Diff(wantSend, se.Requires); diff != "" {
		t.Errorf("send_email.requires (-want +got):\n%s", diff)
	}
	for _, sc := range set.Scenarios {
		if got := ts.FinalOf(sc); got != "send_email" {
			t.Errorf("%s: final %q", sc.Name, got)
		}
	}
}

func TestParse(t *testing.T) {
	ts, err := instructions.ParseTools("tools.yaml", []byte(`
tools:
  get_order_status:
    http:
      url: "${ORDERS_URL}/orders/{order_id}"
      headers: {Authorization: "Bearer ${ORDERS_TOKEN}"}
      timeout: 5s
    max_calls: 3
    args:
      order_id: {from: message, pattern: '[0-9]{4,10}', max_length: 10}
  read_text_file:
    mcp:
      command: ["mcp-server-filesystem", "${KB_DIR}"]
  lookup:
    mcp: {url: "http://127.0.0.1:9000/mcp", tool: search, timeout: 2s}
    args:
      lang: {enum: [pl, en]}
`), instructions.ToolsConfig{LookupEnv: env(map[string]string{"ORDERS_URL": "https://orders.example", "ORDERS_TOKEN": "s3cret", "KB_DIR": "/srv/kb"})})
	if err != nil {
		t.Fatal(err)
	}
	h := ts.Get("get_order_status").HTTP
	if diff := cmp.Diff(&instructions.HTTPSpec{Method: "GET", URL: "https://orders.example/orders/{order_id}", Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: 5 * time.Second}, h); diff != "" {
		t.Errorf("http (-want +got):\n%s", diff)
	}
	if spec := ts.Get("get_order_status").Spec; strings.Contains(spec, "s3cret") || !strings.Contains(spec, "${ORDERS_URL}") {
		t.Errorf("Spec %q must keep ${VAR} and never show header values", spec)
	}
	if got := ts.Get("get_order_status").Limit(24); got != 3 {
		t.Errorf("max_calls limit %d", got)
	}
	if got := ts.Get("lookup").Limit(24); got != 24 {
		t.Errorf("default limit of a non-effect %d, want the per-email cap", got)
	}
	if diff := cmp.Diff(&instructions.MCPSpec{Command: []string{"mcp-server-filesystem", "/srv/kb"}, Tool: "read_text_file", Timeout: instructions.DefaultMCPTimeout}, ts.Get("read_text_file").MCP); diff != "" {
		t.Errorf("mcp (-want +got):\n%s", diff)
	}
	if got := ts.Get("lookup").MCP.Timeout; got != 2*time.Second {
		t.Errorf("mcp timeout %s", got)
	}
	if got := ts.Get("lookup").MCP.Tool; got != "search" {
		t.Errorf("mcp tool %q", got)
	}
	if re := ts.Get("get_order_status").Args["order_id"].Regexp; re.MatchString("12345x") || !re.MatchString("12345") {
		t.Errorf("pattern must match the whole value")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yml  string
		want []string // each must occur in the error
	}{
		{"empty", ``, []string{"tools: tools.yaml: empty"}},
		{"no tools key", `other: 1`, []string{`line 1: unknown field "other"; valid: tools`}},
		{"unknown field", "tools:\n  a: {builtin: send_email, efect: true}", []string{`line 2: unknown field "efect" in tools.a; valid: args, builtin, commitments, effect,`}},
		{"two kinds", "tools:\n  a: {builtin: send_email, mcp: {url: 'http://x/mcp'}}", []string{"tools: tools.yaml: a: exactly one of builtin, http and mcp"}},
		{"no kind", "tools:\n  a: {effect: true}", []string{"a: exactly one of builtin, http and mcp must be set (found 0)"}},
		{"unknown builtin", "tools:\n  a: {builtin: delete_all}", []string{`a: builtin: "delete_all" is not a builtin`}},
		{"bad from", "tools:\n  a: {builtin: send_email, args: {to: {from: anyone}}}", []string{`a: args.to.from: "anyone" must be one of sender, reply_to, staff, serials, serials_or_attachments, message`}},
		{"bad pattern", "tools:\n  a: {builtin: send_email, args: {to: {pattern: '('}}}", []string{"a: args.to.pattern: error parsing regexp"}},
		{"empty policy", "tools:\n  a: {builtin: send_email, args: {to: {}}}", []string{"a: args.to: empty policy"}},
		{"negative", "tools:\n  a: {builtin: send_email, max_calls: -1, args: {to: {max_length: -2}}}", []string{"a: max_calls: -1 is negative", "a: args.to.max_length: -2 is negative"}},
		{"requires unknown", "tools:\n  a: {builtin: send_email, requires: [{call: b}]}", []string{`a: requires[0].call: "b" is not a tool of this file`}},
		{"requires self", "tools:\n  a: {builtin: send_email, requires: [{call: a}]}", []string{"a: requires[0].call: a tool cannot require itself"}},
		{"requires result_one_of empty", "tools:\n  a: {builtin: send_email, requires: [{call: b, result_one_of: []}]}", []string{"a: requires[0].result_one_of: empty list"}},
		{"requires result_one_of matching anything", "tools:\n  a: {builtin: send_email, requires: [{call: b, result_one_of: [{status: valid}, {}]}]}", []string{"a: requires[0].result_one_of[1]: empty result"}},
		{"http", "tools:\n  a: {http: {method: PUT, url: 'ftp://x'}}", []string{`a: http.method: "PUT" must be GET or POST`, `a: http.url: "ftp://x" is not an absolute http(s) URL`}},
		{"mcp both", "tools:\n  a: {mcp: {command: [x], url: 'http://x/mcp'}}", []string{"a: mcp: command and url are exclusive"}},
		{"mcp none", "tools:\n  a: {mcp: {tool: x}}", []string{"a: mcp: command (stdio) or url"}},
		{"missing var", "tools:\n  a: {http: {url: '${NOPE}/x', headers: {X-Key: '${ALSO_NOPE}'}}}", []string{
			"tools: tools.yaml: a: http.url: environment variable NOPE is not set",
			"tools: tools.yaml: a: http.headers.X-Key: environment variable ALSO_NOPE is not set"}},
		{"missing var in mcp", "tools:\n  a: {mcp: {command: [srv, '${KB}']}}", []string{"a: mcp.command[1]: environment variable KB is not set"}},
		{"mcp headers", "tools:\n  a: {mcp: {command: [srv], headers: {Authorization: x}, timeout: -1s}}\n  b: {mcp: {url: 'http://x/mcp', headers: {Authorization: 'Bearer ${NO_TOKEN}'}}}", []string{
			"a: mcp.headers: only for a streamable HTTP server (url)", "a: mcp.timeout: -1s is negative",
			"b: mcp.headers.Authorization: environment variable NO_TOKEN is not set"}},
		{"mcp env", "tools:\n  a: {mcp: {url: 'http://x/mcp', env: {A: b}}}\n  b: {mcp: {command: [srv], env: {KB_TOKEN: '${NO_KB_TOKEN}', 'bad-name': x}}}", []string{
			"a: mcp.env: only for a stdio server (command)",
			"b: mcp.env.KB_TOKEN: environment variable NO_KB_TOKEN is not set", "b: mcp.env.bad-name: not a valid variable name"}},
		{"parallel effect", "tools:\n  a: {builtin: create_ticket, effect: true, parallel: true}\n  b: {builtin: send_email, final: true, parallel: true}", []string{
			"a: parallel: an effect or the final tool", "b: parallel: an effect or the final tool"}},
		{"prefetch not parallel", "tools:\n  a: {builtin: check_warranty, prefetch: true, args: {serial_number: {from: serials}}}", []string{
			"tools: tools.yaml: a: prefetch: only a read-only look-up declared parallel: true"}},
		{"prefetch effect", "tools:\n  a: {builtin: create_ticket, effect: true, prefetch: true}\n  b: {builtin: send_email, final: true, prefetch: true}", []string{
			"a: prefetch: an effect or the final tool", "b: prefetch: an effect or the final tool"}},
		{"prefetch argument not fillable", "tools:\n  a: {mcp: {command: [srv]}, parallel: true, prefetch: true, args: {query: {from: message}, n: {max_length: 3}, s: {from: serials}}}", []string{
			"a: prefetch: argument query has from: message, which the pipeline cannot fill",
			"a: prefetch: argument n has no from, which the pipeline cannot fill"}},
		{"prefetch two serials", "tools:\n  a: {builtin: check_warranty, parallel: true, prefetch: true, args: {s1: {from: serials}, s2: {from: serials_or_attachments}}}", []string{
			"a: prefetch: 2 arguments take a serial"}},
		{"parallel not a bool", "tools:\n  a: {builtin: check_warranty, parallel: maybe}", []string{"line 2", "parallel"}},
		{"all problems at once", "tools:\n  a: {builtin: nope}\n  b: {builtin: send_email, args: {to: {from: x}}}", []string{"a: builtin", "b: args.to.from"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := instructions.ParseTools("tools.yaml", []byte(tt.yml), instructions.ToolsConfig{Builtins: builtins, LookupEnv: env(nil)})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// scenarios builds a scenario set from name -> frontmatter functions.
func scenarios(t *testing.T, files map[string]string) *instructions.Scenarios {
	t.Helper()
	fsys := fstest.MapFS{"main.md": {Data: []byte("rules")}}
	for name, fns := range files {
		fsys["scenarios/"+name+".md"] = &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\navailable_functions:\n" + fns + "---\nbody\n")}
	}
	set, err := instructions.LoadScenarios(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

const sendFn = `  - name: send_email
    description: reply
    parameters: {type: object, properties: {to: {type: string}, subject: {type: string}, body: {type: string}}}
`

func TestCheck(t *testing.T) {
	ts, err := instructions.ParseTools("tools.yaml", []byte(`
tools:
  send_email: {builtin: send_email, final: true, effect: true, args: {to: {from: reply_to}, recipient: {from: staff}},
               requires: [{call: notify_staff, if_declared: true}]}
  notify_staff: {builtin: notify_staff, effect: true}
  check_warranty: {builtin: check_warranty, args: {serial_number: {from: serials}}}
  create_ticket:
    builtin: create_ticket
    requires: [{call: check_warranty, same: [serial, serial_number]}]
  orders: {http: {url: "http://127.0.0.1:1/orders/{order_id}"}}
`), instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	set := scenarios(t, map[string]string{
		"a": sendFn + `  - name: lookup_manual
    description: not bound
    parameters: {type: object, properties: {query: {type: string}}}
  - name: create_ticket
    description: t
    parameters: {type: object, properties: {serial_number: {type: string}}}
  - name: orders
    description: o
    parameters: {type: object, properties: {id: {type: string}}}
`,
		"b": `  - name: check_warranty
    description: c
    parameters: {type: object, properties: {serial_number: {type: string}}}
`,
	})
	err = ts.Check(set)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		`tools: scenarios/a.md: available_functions[1].name: "lookup_manual" has no binding in tools.yaml`,
		`tools: tools.yaml: send_email: args.recipient: "recipient" is not a parameter of send_email as declared in scenarios/a.md (parameters: body, subject, to)`,
		`tools: tools.yaml: create_ticket: requires[0].call: check_warranty is not declared in scenarios/a.md`,
		`tools: tools.yaml: orders: http.url: "order_id" is not a parameter of orders`,
		`tools: scenarios/b.md: available_functions: declares no final function (final in tools.yaml: send_email)`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	// if_declared: a scenario without notify_staff is not held to it.
	if strings.Contains(err.Error(), "call: notify_staff") {
		t.Errorf("an if_declared requirement was reported for a scenario that does not declare it:\n%v", err)
	}

	// same: names a parameter both calls declare.
	set = scenarios(t, map[string]string{"a": sendFn + `  - name: check_warranty
    description: c
    parameters: {type: object, properties: {serial_number: {type: string}}}
  - name: create_ticket
    description: t
    parameters: {type: object, properties: {serial_number: {type: string}}}
`})
	err = ts.Check(set)
	if err == nil || !strings.Contains(err.Error(), `create_ticket: requires[0].same[0]: "serial" is not a parameter of create_ticket`) ||
		!strings.Contains(err.Error(), `requires[0].same[0]: "serial" is not a parameter of check_warranty`) {
		t.Errorf("same: %v", err)
	}
}

// A prefetched look-up must have every parameter a scenario declares for it
// filled by a policy the pipeline can fill: a parameter without one is
// reported, naming the tool, the key and the scenario.
func TestCheckPrefetch(t *testing.T) {
	ts, err := instructions.ParseTools("tools.yaml", []byte(`
tools:
  send_email: {builtin: send_email, final: true, effect: true, args: {to: {from: reply_to}}}
  check_warranty: {builtin: check_warranty, parallel: true, prefetch: true, args: {serial_number: {from: serials}}}
`), instructions.ToolsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	fits := scenarios(t, map[string]string{"a": sendFn + `  - name: check_warranty
    description: c
    parameters: {type: object, properties: {serial_number: {type: string}}}
`})
	if err := ts.Check(fits); err != nil {
		t.Errorf("every parameter filled: %v", err)
	}
	extra := scenarios(t, map[string]string{"a": sendFn + `  - name: check_warranty
    description: c
    parameters: {type: object, properties: {serial_number: {type: string}, model: {type: string}}}
`})
	err = ts.Check(extra)
	if want := "tools: tools.yaml: check_warranty: prefetch: parameter model of check_warranty (as declared in scenarios/a.md) has no from: policy"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// A scenario whose reply promises a person must have its reply wait for
// notify_staff: a tools.yaml whose final function does not require it is
// reported (staff could learn of the promise after the customer, or never).
func TestCheckPromisesPerson(t *testing.T) {
	notify := `  - name: notify_staff
    description: tell staff
    parameters: {type: object, properties: {subject: {type: string}, body: {type: string}}}
`
	fsys := fstest.MapFS{"main.md": {Data: []byte("rules")},
		"scenarios/a.md": {Data: []byte("---\nname: a\ndescription: d\npromises_person: true\navailable_functions:\n" + notify + sendFn + "---\nbody\n")}}
	set, err := instructions.LoadScenarios(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"waits", "tools:\n  send_email: {builtin: send_email, final: true, requires: [{call: notify_staff, if_declared: true}]}\n  notify_staff: {builtin: notify_staff}\n", ""},
		{"does not wait", "tools:\n  send_email: {builtin: send_email, final: true}\n  notify_staff: {builtin: notify_staff}\n",
			"tools: scenarios/a.md: promises_person: the final function send_email does not require notify_staff in tools.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := instructions.ParseTools("tools.yaml", []byte(tc.yaml), instructions.ToolsConfig{})
			if err != nil {
				t.Fatal(err)
			}
			err = ts.Check(set)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check: %v, want %q", err, tc.want)
			}
		})
	}
}

// A URL that is not absolute after ${VAR} expansion is reported as written:
// the expanded value (here a key in the query string) never reaches the
// error, which `triage check` and start-up print.
func TestURLErrorsDoNotExpandSecrets(t *testing.T) {
	lookup := env(map[string]string{"BASE": "orders.example", "KEY": "s3cr3t-token"})
	yml := "tools:\n" +
		"  a: {http: {url: '${BASE}/o/{id}?key=${KEY}'}}\n" +
		"  b: {mcp: {url: '${BASE}/mcp?key=${KEY}'}}\n"
	_, err := instructions.ParseTools("tools.yaml", []byte(yml), instructions.ToolsConfig{Builtins: builtins, LookupEnv: lookup})
	if err == nil {
		t.Fatal("no error for URLs without a scheme")
	}
	for _, w := range []string{`a: http.url: "${BASE}/o/{id}?key=${KEY}" is not an absolute http(s) URL`, `b: mcp.url: "${BASE}/mcp?key=${KEY}" is not an absolute http(s) URL`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "orders.example") {
		t.Errorf("error shows an expanded value:\n%v", err)
	}
}

// An instructions directory from before tools.yaml existed says what is
// missing and where to start, instead of a bare "file does not exist".
func TestLoadMissingFile(t *testing.T) {
	_, err := instructions.LoadTools(fstest.MapFS{"main.md": {Data: []byte("rules")}}, instructions.ToolsConfig{Builtins: builtins})
	want := "tools: tools.yaml: missing: the instructions need a tools.yaml beside main.md"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
}

// A commitments list is names, each once, none among them; a scenario's
// commitments parameter offers only listed ones.
func TestCommitmentsList(t *testing.T) {
	for _, tt := range []struct{ yml, want string }{
		{"tools:\n  s: {builtin: send_email, final: true, commitments: []}", "empty list"},
		{"tools:\n  s: {builtin: send_email, final: true, commitments: [repair, repair, none]}", `"repair" is listed twice`},
		{"tools:\n  s: {builtin: send_email, final: true, commitments: [repair]}", `"none" is missing`},
		{"tools:\n  s: {builtin: send_email, final: true, commitments: [a-b, none]}", `"a-b" is not a name`},
	} {
		_, err := instructions.ParseTools("tools.yaml", []byte(tt.yml), instructions.ToolsConfig{LookupEnv: env(nil)})
		if err == nil || !strings.Contains(err.Error(), "s: commitments: "+tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.yml, err, tt.want)
		}
	}
	ts, err := instructions.ParseTools("tools.yaml", []byte("tools:\n  s: {builtin: send_email, final: true, commitments: [repair, none]}"), instructions.ToolsConfig{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	fn := toolstest.Function(t, "s", toolstest.Object(nil, map[string]any{
		"commitments": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"repair", "refund", "none"}}},
	}))
	err = ts.Check(&instructions.Scenarios{Scenarios: []*instructions.Scenario{{Name: "x", File: "x.md", Functions: []instructions.Function{fn}}}})
	if err == nil || !strings.Contains(err.Error(), `"refund" is not among the commitments`) {
		t.Errorf("Check: %v", err)
	}
}
