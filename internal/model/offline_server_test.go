package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"triage/internal/model"
	"triage/internal/prompt"
)

// sendOnly is a request whose normal answer is a send_email call.
func sendOnly(client *genai.Client, ctx context.Context) (*genai.GenerateContentResponse, error) {
	f := prompt.Facts{Scenario: "missing-info", From: "jan@example.com", ReplyTo: "jan@example.com", Subject: "Hi", Language: "en"}
	return client.Models.GenerateContent(ctx, model.DefaultModel, userTurn(prompt.User(f, "hello", "")),
		&genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: declarations("send_email")}}})
}

func TestFaults(t *testing.T) {
	type seen struct {
		APICode    int
		APIStatus  string
		Finish     []genai.FinishReason
		Parts      []int    // parts per candidate
		To         []string // send_email recipients per candidate
		Cancelled  bool
		NextToSent string // recipient of the next, fault-free request
	}
	tests := []struct {
		fault model.Fault
		want  seen
	}{
		{model.Fault503, seen{APICode: 503, APIStatus: "UNAVAILABLE"}},
		{model.Fault429, seen{APICode: 429, APIStatus: "RESOURCE_EXHAUSTED"}},
		{model.FaultEmpty, seen{Finish: []genai.FinishReason{"STOP"}, Parts: []int{0}, To: []string{""}}},
		{model.FaultSafetyFirst, seen{Finish: []genai.FinishReason{"SAFETY", "STOP"}, Parts: []int{0, 1}, To: []string{"", "jan@example.com"}}},
		{model.FaultMalformed, seen{Finish: []genai.FinishReason{"MALFORMED_FUNCTION_CALL"}, Parts: []int{0}, To: []string{""}}},
		{model.FaultThirdParty, seen{Finish: []genai.FinishReason{"STOP"}, Parts: []int{1}, To: []string{model.ThirdPartyAddress}}},
		{model.FaultHang, seen{Cancelled: true}},
	}
	for _, tc := range tests {
		t.Run(string(tc.fault), func(t *testing.T) {
			srv, client := start(t)
			srv.Inject(tc.fault)
			ctx := context.Background()
			if tc.fault == model.FaultHang {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			var got seen
			resp, err := sendOnly(client, ctx)
			var ae genai.APIError
			switch {
			case errors.As(err, &ae):
				got.APICode, got.APIStatus = ae.Code, ae.Status
			case errors.Is(err, context.DeadlineExceeded):
				got.Cancelled = true
			case err != nil:
				t.Fatal(err)
			default:
				for _, c := range resp.Candidates {
					got.Finish = append(got.Finish, c.FinishReason)
					n, to := 0, ""
					if c.Content != nil {
						n = len(c.Content.Parts)
						for _, p := range c.Content.Parts {
							if p.FunctionCall != nil {
								to, _ = p.FunctionCall.Args["to"].(string)
							}
						}
					}
					got.Parts = append(got.Parts, n)
					got.To = append(got.To, to)
				}
			}
			// The fault is consumed: the next request is answered normally.
			next, err := sendOnly(client, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got.NextToSent, _ = next.FunctionCalls()[0].Args["to"].(string)
			tc.want.NextToSent = "jan@example.com"
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]model.Fault(nil), srv.Pending()); diff != "" {
				t.Errorf("pending (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(2, srv.Requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestThirdPartyWaitsForSendEmail(t *testing.T) {
	srv, client := start(t, model.FaultThirdParty, model.Fault503)
	f := prompt.Facts{Scenario: "valid-warranty", From: "a@example.com", ReplyTo: "a@example.com", Language: "pl", SerialNumbers: []string{"SN-1"}}
	resp, err := client.Models.GenerateContent(context.Background(), model.DefaultModel, userTurn(prompt.User(f, "x", "")),
		&genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: declarations("check_warranty", "send_email")}}})
	if err != nil {
		t.Fatalf("the 503 behind third_party must wait too: %v", err)
	}
	if got := resp.FunctionCalls()[0].Name; got != "check_warranty" {
		t.Fatalf("first call = %s", got)
	}
	if diff := cmp.Diff([]model.Fault{model.FaultThirdParty, model.Fault503}, srv.Pending()); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	resp, err = sendOnly(client, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(model.ThirdPartyAddress, resp.FunctionCalls()[0].Args["to"]); diff != "" {
		t.Errorf("to (-want +got):\n%s", diff)
	}
	_, err = sendOnly(client, context.Background())
	var ae genai.APIError
	if !errors.As(err, &ae) || ae.Code != 503 {
		t.Errorf("third request: err = %v, want 503", err)
	}
}

func TestHTTPErrors(t *testing.T) {
	srv, _ := start(t)
	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantStatus               string
	}{
		{"unknown path", "POST", "/v1beta/files", "{}", 404, "NOT_FOUND"},
		{"countTokens not served", "POST", "/v1beta/models/m:countTokens", "{}", 404, "NOT_FOUND"},
		{"bad JSON", "POST", "/v1beta/models/m:generateContent", "{not json", 400, "INVALID_ARGUMENT"},
		{"no contents", "POST", "/v1beta/models/m:generateContent", "{}", 400, "INVALID_ARGUMENT"},
		{"GET", "GET", "/v1beta/models/m:generateContent", "", 405, "INVALID_ARGUMENT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL()+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var e struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Status  string `json:"status"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("not JSON: %q", b)
			}
			got := []any{resp.StatusCode, e.Error.Code, e.Error.Status, strings.HasPrefix(e.Error.Message, "offline: ")}
			if diff := cmp.Diff([]any{tc.wantCode, tc.wantCode, tc.wantStatus, true}, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nbody: %s", diff, b)
			}
		})
	}
}

func TestConcurrent(t *testing.T) {
	srv, client := start(t)
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := prompt.Facts{Scenario: "valid-warranty", From: "a@example.com", ReplyTo: "a@example.com",
				Language: "pl", SerialNumbers: []string{fmt.Sprintf("SN-%d", i)}}
			resp, err := client.Models.GenerateContent(context.Background(), fmt.Sprintf("model-%d", i), userTurn(prompt.User(f, "x", "")),
				&genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: declarations("check_warranty", "send_email")}}})
			if err != nil {
				errs <- err
				return
			}
			if got := resp.FunctionCalls()[0].Args["serial_number"]; got != f.SerialNumbers[0] {
				errs <- fmt.Errorf("request %d: serial %v", i, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if diff := cmp.Diff(n, srv.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestNoFactsBlock(t *testing.T) {
	_, client := start(t)
	resp, err := client.Models.GenerateContent(context.Background(), model.DefaultModel, userTurn("Send an email to x@example.com"),
		&genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: declarations("send_email")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.FunctionCalls()) != 0 || !strings.HasPrefix(resp.Text(), "offline: ") {
		t.Errorf("want an offline text answer without calls, got %+v", resp.Candidates[0].Content)
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct {
		in      string
		want    []model.Fault
		wantErr string
	}{
		{in: "", want: nil},
		{in: "503", want: []model.Fault{model.Fault503}},
		{in: " 503, 429 ,empty,safety_first,malformed_call,third_party,hang,", want: model.AllFaults},
		{in: "503,bogus", wantErr: `offline: unknown fault "bogus"`},
		{in: "timeout", wantErr: `offline: unknown fault "timeout"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := model.ParseFaults(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want prefix %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestStartRejectsUnknownFault(t *testing.T) {
	if _, err := model.StartOffline(model.OfflineOptions{Faults: []model.Fault{"nope"}}); err == nil {
		t.Fatal("Start accepted an unknown fault")
	}
}

func TestCloseReleasesHang(t *testing.T) {
	srv, client := start(t, model.FaultHang)
	done := make(chan error, 1)
	go func() {
		_, err := sendOnly(client, context.Background())
		done <- err
	}()
	// Wait until the hanging request has reached the server.
	for srv.Requests() == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("a request held by hang succeeded after Close")
	}
}

func BenchmarkGenerate(b *testing.B) {
	_, client := start(b)
	f := prompt.Facts{Scenario: "valid-warranty", From: "a@example.com", ReplyTo: "a@example.com", Language: "pl", SerialNumbers: []string{"SN-1001"}}
	contents := userTurn(prompt.User(f, strings.Repeat("Pralka nie działa. ", 50), ""))
	ctx := context.Background()
	for b.Loop() {
		cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: declarations("check_warranty", "create_ticket", "send_email")}}}
		if _, err := client.Models.GenerateContent(ctx, model.DefaultModel, contents, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLatencyIsTheAnswersDelay: with Latency set, an answer (a normal one
// and an injected fault alike) leaves no sooner than Latency after its
// request came, the stand-in's own work included in it.
func TestLatencyIsTheAnswersDelay(t *testing.T) {
	const latency = 60 * time.Millisecond
	srv, client := startWith(t, model.OfflineOptions{Latency: latency, Scenarios: declared})
	for _, fault := range []model.Fault{"", model.Fault503} {
		if fault != "" {
			srv.Inject(fault)
		}
		start := time.Now()
		_, err := sendOnly(client, context.Background())
		took := time.Since(start)
		var api genai.APIError
		if fault == model.Fault503 && !(errors.As(err, &api) && api.Code == 503) || fault == "" && err != nil {
			t.Fatalf("fault %q: got %v", fault, err)
		}
		if took < latency {
			t.Errorf("fault %q: answered after %s, before the latency of %s", fault, took, latency)
		}
	}
}
