// The typed result of one tool call, and the envelope it is to the model.

package agent

// ErrorCode says why a tool call failed: the envelope's error.code. The
// tools name their codes (the dispatcher's Code* constants); the loop's
// own is CodeNoResponse.
type ErrorCode string

// CodeNoResponse is the code of a call the tools answered with neither a
// result nor an error (a zero Response).
const CodeNoResponse ErrorCode = "internal"

// ToolError is the error half of a Response.
type ToolError struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

func (e *ToolError) Error() string { return string(e.Code) + ": " + e.Message }

// Response is what one tool call returns: its result when OK, else its
// error.
type Response struct {
	OK bool
	// Result is the result as the model sees it (a JSON object), when OK.
	Result map[string]any
	// Err says why the call failed, when not OK.
	Err *ToolError
}

// Succeeded is the Response of a call that returned result.
func Succeeded(result map[string]any) Response { return Response{OK: true, Result: result} }

// Failed is the Response of a call that failed with code and message.
func Failed(code ErrorCode, message string) Response {
	return Response{Err: &ToolError{Code: code, Message: message}}
}

// noResponse stands in for a Response that is neither a result nor an
// error.
var noResponse = ToolError{Code: CodeNoResponse, Message: "no response from tool"}

// Envelope is r as the model sees it, the function response's JSON object:
// {"ok":true,"result":{...}} or {"ok":false,"error":{"code":"...",
// "message":"..."}}. Its values are plain JSON values (the code a string),
// so that a model reading the history back sees what it would decode.
func (r Response) Envelope() map[string]any {
	if r.OK {
		return map[string]any{"ok": true, "result": r.Result}
	}
	e := r.Err
	if e == nil {
		e = &noResponse
	}
	return map[string]any{"ok": false, "error": map[string]any{"code": string(e.Code), "message": e.Message}}
}
