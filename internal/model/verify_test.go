package model_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/agent"
	"triage/internal/decision"
	"triage/internal/model"
	"triage/internal/testkit/geminitest"
)

func verifierOn(t *testing.T, steps ...geminitest.Step) (*model.Verifier, *geminitest.Server) {
	srv := geminitest.New(t, steps...)
	return &model.Verifier{Model: &agent.Gemini{Client: srv.Client()}, ModelName: "gemini-verifier"}, srv
}

// The verifier's answer is read as the schema asks; anything else is an
// error, never an empty list (a pass).
func TestVerifierAnswer(t *testing.T) {
	req := decision.VerifyRequest{Reply: "Naprawimy ekspres.", Basis: decision.Guarantee, Commitments: []decision.Commitment{decision.CommitRepair}}
	for _, tt := range []struct {
		name   string
		answer string
		want   []decision.Statement
		err    string
	}{
		{"a list", `{"unsupported":[{"quote":"Naprawimy ekspres.","kind":"promise","reason":"r"}]}`,
			[]decision.Statement{{Quote: "Naprawimy ekspres.", Kind: decision.KindPromise, Reason: "r"}}, ""},
		{"an empty list", `{"unsupported":[]}`, []decision.Statement{}, ""},
		{"no list", `{"verdict":"ok"}`, nil, "has no unsupported list"},
		{"prose", `The reply is fine.`, nil, "not the requested JSON"},
		{"nothing", ``, nil, "not the requested JSON"},
		{"an unknown kind", `{"unsupported":[{"quote":"x","kind":"tone","reason":"r"}]}`, nil, `kind "tone"`},
		{"too many", `{"unsupported":[` + strings.Repeat(`{"quote":"x","kind":"fact","reason":"r"},`, decision.MaxStatements) + `{"quote":"x","kind":"fact","reason":"r"}]}`, nil, "at most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := verifierOn(t, geminitest.One(geminitest.Text(tt.answer)))
			got, err := v.Verify(context.Background(), req)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err %v, want one saying %q (got %v)", err, tt.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// A failed call is an error; the verifier asks once (no retry).
func TestVerifierCallFails(t *testing.T) {
	v, srv := verifierOn(t, geminitest.Step{Status: 500, Body: `{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`})
	if _, err := v.Verify(context.Background(), decision.VerifyRequest{Reply: "x"}); err == nil {
		t.Fatal("no error from a failed call")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// What one request carries is bounded, whatever the sources and the
// customer's text weigh; the reply, the decision and the declared
// commitments are in it, under a structured-output request.
func TestVerifierRequestBounded(t *testing.T) {
	v, srv := verifierOn(t, geminitest.One(geminitest.Text(`{"unsupported":[]}`)))
	big := strings.Repeat("x", 1<<20)
	d := &decision.Decision{Basis: decision.Statutory, Remedies: []decision.Remedy{decision.Repair}}
	_, err := v.Verify(context.Background(), decision.VerifyRequest{Reply: "Naprawimy ekspres. " + big, Basis: decision.Statutory,
		Commitments: []decision.Commitment{decision.CommitRepair}, Decision: d, Results: []string{big, big}, Instructions: big, Customer: big})
	if err != nil {
		t.Fatal(err)
	}
	bodies := srv.Bodies()
	const bound = model.MaxVerifyReply + model.MaxVerifyResults + model.MaxVerifyInstructions + model.MaxVerifyCustomer + 16<<10
	if len(bodies) != 1 || len(bodies[0]) > bound {
		t.Fatalf("%d requests, the first %d bytes; want one within %d", len(bodies), len(bodies[0]), bound)
	}
	body := string(bodies[0])
	for _, want := range []string{"Naprawimy ekspres.", `\"basis\":\"statutory\"`, "commitments: repair", `"responseMimeType":"application/json"`, `"responseJsonSchema"`, `"promise"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the request lacks %s", want)
		}
	}
}
