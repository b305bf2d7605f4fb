package main

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"triage"
	"triage/internal/dispatcher"
	"triage/internal/testkit/geminitest"
)

// The claim set (testdata/claimset): per language, warranty claims and the
// reply a model sends to each, either truthful or with one claim triage
// cannot back, of one kind.
type claimSet struct {
	Language string      `yaml:"language"`
	From     string      `yaml:"from"`
	Subject  string      `yaml:"subject"`
	Items    []claimItem `yaml:"items"`
}

type claimItem struct {
	Kind   string `yaml:"kind"`
	Serial string `yaml:"serial"`
	// AlsoSerials are the customer's other devices: the scripted model
	// checks each beside Serial, in the same turn.
	AlsoSerials []string `yaml:"also_serials"`
	Email       string   `yaml:"email"`
	Reply       string   `yaml:"reply"`
	Decision    string   `yaml:"decision"`
	Commitments []string `yaml:"commitments"`
	// KnownGap says why an unbacked claim of this item is not refused (or
	// a truthful reply is): a limit of the checks, reported apart.
	KnownGap string `yaml:"known_gap"`
}

// claimKinds are the item kinds: truthful, then one per kind of unbacked
// claim.
var claimKinds = []string{"truthful", "promise", "status", "date", "amount", "id", "contact", "customer_fact"}

// claimRefusals are the send_email refusals that keep an unbacked claim
// from the customer.
var claimRefusals = []string{string(dispatcher.CodeUngroundedClaim), string(dispatcher.CodeCommitmentNotAllowed),
	string(dispatcher.CodeDecisionMismatch), string(dispatcher.CodeDecisionMissing)}

func loadClaimSets(t *testing.T) []claimSet {
	t.Helper()
	files, err := filepath.Glob("testdata/claimset/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("claim set: %d files, err %v", len(files), err)
	}
	var sets []claimSet
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s claimSet
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for i, it := range s.Items {
			if !slices.Contains(claimKinds, it.Kind) || it.Serial == "" || it.Email == "" || it.Reply == "" {
				t.Fatalf("%s: item %d: kind %q (one of %v), serial, email and reply are required", f, i+1, it.Kind, claimKinds)
			}
		}
		sets = append(sets, s)
	}
	return sets
}

// claimEmail is the customer's email of an item, as RFC 5322.
func claimEmail(s claimSet, n int, it claimItem) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: serwis@example.com\r\nSubject: %s\r\n", s.From, mime.QEncoding.Encode("UTF-8", s.Subject))
	fmt.Fprintf(&b, "Date: Mon, 16 Nov 2026 09:12:44 +0100\r\nMessage-ID: <claimset-%s-%d@example.net>\r\n", s.Language, n)
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(it.Email, "\n", "\r\n"))
	return b.String()
}

// claimResult is what triage did with one item's reply.
type claimResult struct {
	refused  string // the first refusal's code, "" when none
	replied  bool   // a reply went out
	detail   string
	sentBody string
}

// runClaimItem processes one item's email with a scripted Gemini that
// checks the warranty, then sends the item's reply, and sends it again
// unchanged when it is refused.
func runClaimItem(t *testing.T, s claimSet, n int, it claimItem) claimResult {
	t.Helper()
	dir := t.TempDir()
	eml := filepath.Join(dir, fmt.Sprintf("%s-%02d.eml", s.Language, n))
	if err := os.WriteFile(eml, []byte(claimEmail(s, n, it)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, addr, _ := strings.Cut(s.From, "<")
	addr = strings.TrimSuffix(addr, ">")
	args := geminitest.Obj("to", addr, "subject", "Re: "+s.Subject, "body", it.Reply)
	if it.Decision != "" {
		args["decision"] = it.Decision
	}
	if it.Commitments != nil {
		args["commitments"] = it.Commitments
	}
	send := geminitest.One(geminitest.Call("c2", "send_email", args))
	checks := []map[string]any{geminitest.Call("c1", "check_warranty", geminitest.Obj("serial_number", it.Serial))}
	for i, sn := range it.AlsoSerials {
		checks = append(checks, geminitest.Call(fmt.Sprintf("c1-%d", i+1), "check_warranty", geminitest.Obj("serial_number", sn)))
	}
	srv := geminitest.New(t, geminitest.One(checks...),
		send, send, geminitest.One(geminitest.Text("-")), geminitest.One(geminitest.Text("-")))
	t.Setenv("GEMINI_API_KEY", geminitest.APIKey)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL())
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"process", "--json", "--warranty-csv", "testdata/claimset/warranty.csv",
		"--tickets-db", filepath.Join(dir, "tickets.db"), "--outbox", filepath.Join(dir, "outbox"), "--staff", "kierownik@example.com", eml},
		strings.NewReader(""), &out, &errb)
	outs := decodeOutcomes(t, out.String())
	if len(outs) != 1 {
		t.Fatalf("exit %d, %d outcomes; stderr:\n%s", code, len(outs), errb.String())
	}
	o := outs[0]
	r := claimResult{replied: o.Status == triage.StatusReplied && o.Reply != nil, detail: string(o.Status) + " " + string(o.Reason) + ": " + o.Detail}
	for _, c := range o.FunctionCalls {
		if c.Name != dispatcher.FuncSendEmail {
			continue
		}
		if c.Error != nil && r.refused == "" {
			r.refused = string(c.Error.Code)
			r.detail += " | " + c.Error.Message
		}
		if c.OK && !c.Blocked {
			r.sentBody, _ = c.Args["body"].(string)
		}
	}
	if o.Status != triage.StatusReplied && o.Status != triage.StatusFailed {
		t.Errorf("status %s %s (%s), want replied or failed", o.Status, o.Reason, o.Detail)
	}
	return r
}

// claimTally counts one row of the table.
type claimTally struct{ unbacked, refused, truthful, alarms, gaps int }

// TestClaimSet runs every item of the claim set through `triage process
// --json` with a scripted Gemini: a truthful reply must go out, a reply
// with an unbacked claim must be refused (ungrounded_claim or a
// commitment refusal) and never sent. It logs recall and false alarms per
// kind and per language; items marked known_gap are counted apart.
func TestClaimSet(t *testing.T) {
	noDefaultConfig(t)
	sets := loadClaimSets(t)
	byKind, byLang := map[string]*claimTally{}, map[string]*claimTally{}
	var total claimTally
	var gaps []string
	items := 0
	for _, s := range sets {
		for i, it := range s.Items {
			n := i + 1
			items++
			name := fmt.Sprintf("%s/%02d-%s", s.Language, n, it.Kind)
			var r claimResult
			t.Run(name, func(t *testing.T) { r = runClaimItem(t, s, n, it) })
			tallies := []*claimTally{tally(byKind, it.Kind), tally(byLang, s.Language), &total}
			refused := slices.Contains(claimRefusals, r.refused)
			var miss string
			if it.Kind == "truthful" {
				if refused || !r.replied {
					miss = "false alarm: " + r.detail
				}
			} else if !refused || r.replied || r.sentBody != "" {
				miss = "missed: " + r.detail
			}
			t.Logf("%s: %s", name, r.detail)
			if it.KnownGap != "" {
				for _, c := range tallies {
					c.gaps++
				}
				gaps = append(gaps, fmt.Sprintf("%s: %s (%s)", name, it.KnownGap, map[bool]string{true: "still " + miss, false: "now caught"}[miss != ""]))
				continue
			}
			for _, c := range tallies {
				if it.Kind == "truthful" {
					c.truthful++
					if miss != "" {
						c.alarms++
					}
				} else {
					c.unbacked++
					if miss == "" {
						c.refused++
					}
				}
			}
			if miss != "" {
				t.Errorf("%s: %s\nreply: %s", name, miss, it.Reply)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "claim set: %d items, %d languages\n", items, len(sets))
	row := func(label string, c *claimTally) {
		fmt.Fprintf(&b, "  %-14s recall %3d/%-3d %s  false alarms %2d/%-3d %s  known gaps %d\n", label,
			c.refused, c.unbacked, pct(c.refused, c.unbacked), c.alarms, c.truthful, pct(c.alarms, c.truthful), c.gaps)
	}
	b.WriteString(" by kind:\n")
	for _, k := range claimKinds {
		if c := byKind[k]; c != nil {
			row(k, c)
		}
	}
	b.WriteString(" by language:\n")
	for _, s := range sets {
		row(s.Language, byLang[s.Language])
	}
	row("all", &total)
	for _, g := range gaps {
		fmt.Fprintf(&b, "  known gap %s\n", g)
	}
	t.Log("\n" + b.String())
}

func tally(m map[string]*claimTally, k string) *claimTally {
	if m[k] == nil {
		m[k] = &claimTally{}
	}
	return m[k]
}

func pct(n, d int) string {
	if d == 0 {
		return "   -  "
	}
	return fmt.Sprintf("%5.1f%%", 100*float64(n)/float64(d))
}
