// Package offline is the built-in offline model: a deterministic stand-in for
// Gemini served over HTTP on loopback and reached through the real genai
// client, so offline runs exercise the same wire code as production. It is
// not an LLM: it follows the declared functions in a fixed order using the
// facts block of the prompt (package prompt) and the function results, and it
// can inject faults for tests.
package offline

// Fault is one injected failure, consumed by the next matching request.
type Fault string

const (
	Fault503         Fault = "503"            // HTTP 503 UNAVAILABLE
	Fault429         Fault = "429"            // HTTP 429 RESOURCE_EXHAUSTED
	FaultEmpty       Fault = "empty"          // 200 with a candidate that has no content
	FaultSafetyFirst Fault = "safety_first"   // first candidate SAFETY-blocked, second usable
	FaultMalformed   Fault = "malformed_call" // finishReason MALFORMED_FUNCTION_CALL
	FaultThirdParty  Fault = "third_party"    // next send_email goes to attacker@example.net
	FaultHang        Fault = "hang"           // do not answer until the request is canceled
)

// Server is a running offline model.
type Server struct{}

// Options configure Start.
type Options struct {
	Faults []Fault // initial fault queue
}

// Start listens on 127.0.0.1:0 and serves POST /{version}/models/{model}:generateContent.
func Start(opts Options) (*Server, error) { panic("TODO") }

// URL is the base URL to give genai (HTTPOptions.BaseURL).
func (s *Server) URL() string { panic("TODO") }

// Inject appends faults to the queue.
func (s *Server) Inject(f ...Fault) { panic("TODO") }

// Requests returns how many generateContent requests were served.
func (s *Server) Requests() int { panic("TODO") }

// Close stops the server.
func (s *Server) Close() error { panic("TODO") }
