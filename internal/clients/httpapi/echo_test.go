package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"triage/internal/clients/httpapi"
)

// A 2xx answer that echoes the token (a debugging server, a "whoami"
// endpoint) reaches the model redacted, like an error answer.
func TestSecretsEchoedIn2xxAreRedacted(t *testing.T) {
	const token = "s3cr3t-T0KEN"
	const apiKey = "k3y-VALUE-9"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"status":  "ok",
			"auth":    r.Header.Get("Authorization"),
			"request": []any{r.URL.String(), map[string]any{"key": r.URL.Query().Get("key")}},
		})
	}))
	defer srv.Close()
	tool := newTool(t, httpapi.ToolConfig{URL: srv.URL + "/orders/{id}?key=" + apiKey, Headers: map[string]string{"Authorization": "Bearer " + token}})
	got, err := tool.Call(context.Background(), map[string]any{"id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": "ok", "auth": "[redacted]",
		"request": []any{"/orders/1?key=[redacted]", map[string]any{"key": "[redacted]"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}
