// The built-in offline model: a deterministic stand-in for Gemini served
// over HTTP on loopback and reached through the real genai client, so
// offline runs exercise the same wire code as production. It is not an LLM:
// it follows any scenario generically from the declared functions (in
// declaration order, arguments filled by parameter name from the facts
// block of the prompt, package prompt), the function results and a few cues
// in the scenario's instructions, names no scenario, writes no signature
// (the pipeline signs), says it is a stand-in in every reply, and can
// inject faults for tests.

package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"google.golang.org/genai"

	"triage/internal/instructions"
)

// OfflineModelVersion is the modelVersion of every answer, so nobody
// mistakes the offline model for Gemini.
const OfflineModelVersion = "triage-offline-1"

// maxOfflineBody caps a request body.
const maxOfflineBody = 32 << 20

// Fault is one injected failure, consumed by the next matching request.
type Fault string

const (
	Fault503         Fault = "503"            // HTTP 503 UNAVAILABLE
	Fault429         Fault = "429"            // HTTP 429 RESOURCE_EXHAUSTED
	FaultEmpty       Fault = "empty"          // 200 with a candidate that has no content
	FaultSafetyFirst Fault = "safety_first"   // first candidate SAFETY-blocked, second usable
	FaultMalformed   Fault = "malformed_call" // finishReason MALFORMED_FUNCTION_CALL
	FaultThirdParty  Fault = "third_party"    // the next reply (a call with "to") goes to attacker@example.net
	FaultHang        Fault = "hang"           // do not answer until the request is canceled
)

// AllFaults lists every known fault, in documentation order.
var AllFaults = []Fault{Fault503, Fault429, FaultEmpty, FaultSafetyFirst, FaultMalformed, FaultThirdParty, FaultHang}

// ThirdPartyAddress is where FaultThirdParty redirects a reply.
const ThirdPartyAddress = "attacker@example.net"

// ParseFaults parses a comma-separated fault list such as "503,empty"
// (spaces and empty items are ignored). The error names the bad fault.
func ParseFaults(s string) ([]Fault, error) {
	var out []Fault
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		f := Fault(strings.ToLower(item))
		if !knownFault(f) {
			names := make([]string, len(AllFaults))
			for i, k := range AllFaults {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("offline: unknown fault %q (known: %s)", item, strings.Join(names, ", "))
		}
		out = append(out, f)
	}
	return out, nil
}

func knownFault(f Fault) bool {
	for _, k := range AllFaults {
		if f == k {
			return true
		}
	}
	return false
}

// OfflineServer is a running offline model.
type OfflineServer struct {
	ln   net.Listener
	srv  *http.Server
	url  string
	log  *slog.Logger
	quit chan struct{}
	done chan struct{}

	mu     sync.Mutex
	faults []Fault

	requests atomic.Int64
	conns    atomic.Int64
	latency  time.Duration
	set      *instructions.Scenarios
	closed   sync.Once
	closeErr error
}

// OfflineOptions configure StartOffline.
type OfflineOptions struct {
	Faults []Fault      // initial fault queue
	Logger *slog.Logger // default discard; never logs message text
	// Latency is how long after its request every generateContent
	// answer leaves, the stand-in's own work within it (benchmarks: a
	// model with a fixed latency).
	Latency time.Duration
	// Scenarios are the loaded scenarios: what the one named in the facts
	// declares about its reply (asks_for, declines_topic) shapes the reply
	// the offline model writes. Nil: no scenario declares anything.
	Scenarios *instructions.Scenarios
}

// StartOffline listens on 127.0.0.1:0 and serves POST /{version}/models/{model}:generateContent.
func StartOffline(opts OfflineOptions) (*OfflineServer, error) {
	for _, f := range opts.Faults {
		if !knownFault(f) {
			return nil, fmt.Errorf("offline: unknown fault %q", f)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("offline: listen: %w", err)
	}
	s := &OfflineServer{
		ln:      ln,
		url:     "http://" + ln.Addr().String(),
		log:     log,
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		faults:  append([]Fault(nil), opts.Faults...),
		latency: opts.Latency,
		set:     opts.Scenarios,
	}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("offline: serve", "err", err)
		}
	}()
	return s, nil
}

// URL is the base URL to give genai (HTTPOptions.BaseURL).
func (s *OfflineServer) URL() string { return s.url }

// Inject appends faults to the queue.
func (s *OfflineServer) Inject(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f...)
}

// Pending returns the faults not yet consumed, in order.
func (s *OfflineServer) Pending() []Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Fault(nil), s.faults...)
}

// Requests returns how many generateContent requests were served.
func (s *OfflineServer) Requests() int { return int(s.requests.Load()) }

// Connections returns how many TCP connections clients opened.
func (s *OfflineServer) Connections() int { return int(s.conns.Load()) }

// Close stops the server; requests held by FaultHang are released.
func (s *OfflineServer) Close() error {
	s.closed.Do(func() {
		close(s.quit)
		err := s.srv.Close()
		<-s.done
		if err != nil {
			s.closeErr = fmt.Errorf("offline: close: %w", err)
		}
	})
	return s.closeErr
}

// geminiRequest is the REST body genai sends for models.generateContent in
// Gemini API mode (see generateContentParametersToMldev in the SDK).
type geminiRequest struct {
	Contents          []*genai.Content        `json:"contents"`
	SystemInstruction *genai.Content          `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool           `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig       `json:"toolConfig,omitempty"`
	SafetySettings    []*genai.SafetySetting  `json:"safetySettings,omitempty"`
	GenerationConfig  *genai.GenerationConfig `json:"generationConfig,omitempty"`
	CachedContent     string                  `json:"cachedContent,omitempty"`
}

func (s *OfflineServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	model, ok := generatePath(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, "NOT_FOUND", "offline: unknown path "+r.URL.Path)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "INVALID_ARGUMENT", "offline: generateContent needs POST")
		return
	}
	n := s.requests.Add(1)
	if s.latency > 0 {
		// The answer leaves Latency after the request came, whatever the
		// stand-in's own work took: a model's work is within its latency.
		w = &delayed{ResponseWriter: w, due: time.Now().Add(s.latency), ctx: r.Context(), quit: s.quit}
	}
	// A request with a customer's photo is megabytes: read it into one
	// buffer of its declared length, not a run of doubling ones.
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= maxOfflineBody {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxOfflineBody))
	body := buf.Bytes()
	if err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "offline: read request: "+err.Error())
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "offline: invalid JSON payload: "+err.Error())
		return
	}
	if len(req.Contents) == 0 {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "offline: contents is not specified")
		return
	}

	ans := answer(&req, s.set)
	fault := s.takeFault(ans)
	s.log.Debug("offline: generateContent", "model", model, "request", n, "kind", ans.kind, "fault", string(fault))

	var cands []*genai.Candidate
	switch fault {
	case Fault503:
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "offline: injected fault")
		return
	case Fault429:
		writeError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "offline: injected fault")
		return
	case FaultHang:
		select {
		case <-r.Context().Done():
		case <-s.quit:
		}
		// Drop the connection without an answer (a normal return would
		// send an empty 200).
		panic(http.ErrAbortHandler)
	case FaultEmpty:
		cands = []*genai.Candidate{{
			Content:      &genai.Content{Role: genai.RoleModel},
			FinishReason: genai.FinishReasonStop,
		}}
	case FaultMalformed:
		cands = []*genai.Candidate{{
			FinishReason:  genai.FinishReasonMalformedFunctionCall,
			FinishMessage: "offline: injected fault",
		}}
	case FaultSafetyFirst:
		cands = []*genai.Candidate{{
			FinishReason: genai.FinishReasonSafety,
			SafetyRatings: []*genai.SafetyRating{{
				Category:    genai.HarmCategoryDangerousContent,
				Probability: genai.HarmProbabilityHigh,
				Blocked:     true,
			}},
		}, ans.candidate(1)}
	case FaultThirdParty:
		for _, p := range ans.content.Parts {
			if p.FunctionCall != nil && p.FunctionCall.Args["to"] != nil {
				p.FunctionCall.Args["to"] = ThirdPartyAddress
			}
		}
		cands = []*genai.Candidate{ans.candidate(0)}
	default:
		cands = []*genai.Candidate{ans.candidate(0)}
	}

	resp := &genai.GenerateContentResponse{
		Candidates:    cands,
		ModelVersion:  OfflineModelVersion,
		ResponseID:    fmt.Sprintf("offline-%d", n),
		UsageMetadata: offlineUsage(body, cands),
	}
	out, err := json.Marshal(resp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "INTERNAL", "offline: encode response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(out)
}

// delayed holds an answer back until due: its first WriteHeader or Write
// waits (or until the request or the server ends).
type delayed struct {
	http.ResponseWriter
	due    time.Time
	ctx    context.Context
	quit   <-chan struct{}
	waited bool
}

func (d *delayed) wait() {
	if d.waited {
		return
	}
	d.waited = true
	t := time.NewTimer(time.Until(d.due))
	defer t.Stop()
	select {
	case <-t.C:
	case <-d.ctx.Done():
	case <-d.quit:
	}
}

func (d *delayed) WriteHeader(code int) {
	d.wait()
	d.ResponseWriter.WriteHeader(code)
}

func (d *delayed) Write(b []byte) (int, error) {
	d.wait()
	return d.ResponseWriter.Write(b)
}

// takeFault pops the head of the queue, except that FaultThirdParty stays
// queued until an answer is a reply (a call with "to").
func (s *OfflineServer) takeFault(a *turn) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return ""
	}
	f := s.faults[0]
	if f == FaultThirdParty && !a.sendsReply() {
		return ""
	}
	s.faults = s.faults[1:]
	return f
}

// generatePath accepts /{version}/models/{model}:generateContent (also
// tunedModels/); any model name is fine.
func generatePath(p string) (model string, ok bool) {
	rest, ok := strings.CutSuffix(p, ":generateContent")
	if !ok {
		return "", false
	}
	parts := strings.SplitN(strings.TrimPrefix(rest, "/"), "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return "", false
	}
	if parts[1] != "models" && parts[1] != "tunedModels" {
		return "", false
	}
	return parts[2], true
}

func writeError(w http.ResponseWriter, code int, status, msg string) {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(map[string]any{
		"error": map[string]any{"code": code, "message": msg, "status": status},
	})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// offlineUsage is an ESTIMATE, not a tokenizer count: about four characters per
// token. promptTokenCount = ceil(runes in the request body / 4);
// candidatesTokenCount = ceil(runes in the JSON of the candidates' content / 4);
// totalTokenCount is their sum.
func offlineUsage(body []byte, cands []*genai.Candidate) *genai.GenerateContentResponseUsageMetadata {
	prompt := ceilDiv4(utf8.RuneCount(body))
	out := 0
	for _, c := range cands {
		if c.Content == nil {
			continue
		}
		b, _ := json.Marshal(c.Content)
		out += ceilDiv4(utf8.RuneCount(b))
	}
	return &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:     int32(prompt),
		CandidatesTokenCount: int32(out),
		TotalTokenCount:      int32(prompt + out),
	}
}

func ceilDiv4(n int) int { return (n + 3) / 4 }
