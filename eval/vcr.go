package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
	"gopkg.in/dnaeon/go-vcr.v4/pkg/recorder"
)

// ErrReplayMismatch stops a replayed case whose model request is not in its
// cassette.
var ErrReplayMismatch = errors.New("eval: model request not found in the cassette")

// secretHeaders never reach a cassette.
var secretHeaders = []string{"X-Goog-Api-Key", "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// CassettePath is where a case's model exchanges are stored under dir
// (go-vcr adds ".yaml").
func CassettePath(dir, caseID string) string {
	return filepath.Join(dir, strings.TrimSuffix(messageIDFor(caseID), "@eval.triage.invalid"))
}

// vcr is one case run's record or replay of model HTTP exchanges.
type vcr struct {
	rec    *recorder.Recorder
	file   string
	replay bool
	flag   string // the --record/--replay directory, for messages

	mu       sync.Mutex
	requests int
	mismatch string
	onMiss   func()
}

// newVCR opens the cassette of caseID under dir, for recording (replay
// false: always a fresh cassette, secrets stripped before saving) or
// replaying (true: every request must match a recorded one by method, URL
// path and body; JSON bodies compare as values).
func newVCR(dir, caseID string, replay bool, real http.RoundTripper) (*vcr, error) {
	name := CassettePath(dir, caseID)
	v := &vcr{file: name + ".yaml", replay: replay, flag: dir}
	mode := recorder.ModeRecordOnly
	if replay {
		mode = recorder.ModeReplayOnly
	}
	if real == nil {
		real = http.DefaultTransport
	}
	rec, err := recorder.New(name,
		recorder.WithMode(mode),
		recorder.WithRealTransport(real),
		recorder.WithMatcher(matchRequest),
		recorder.WithSkipRequestLatency(true),
		recorder.WithHook(stripSecrets, recorder.BeforeSaveHook),
	)
	if err != nil {
		if errors.Is(err, cassette.ErrCassetteNotFound) {
			return nil, fmt.Errorf("no cassette %s for this case: record it first with --record %s", v.file, dir)
		}
		return nil, fmt.Errorf("eval: cassette %s: %w", v.file, err)
	}
	v.rec = rec
	return v, nil
}

// Client is the HTTP client to give the model.
func (v *vcr) Client() *http.Client {
	return &http.Client{Transport: v}
}

// RoundTrip passes the request to the recorder and notices replay misses.
func (v *vcr) RoundTrip(req *http.Request) (*http.Response, error) {
	v.mu.Lock()
	v.requests++
	n := v.requests
	v.mu.Unlock()
	resp, err := v.rec.RoundTrip(req)
	if err != nil && v.replay && errors.Is(err, cassette.ErrInteractionNotFound) {
		v.mu.Lock()
		if v.mismatch == "" {
			v.mismatch = fmt.Sprintf("replay mismatch: model request %d (%s %s) is not in cassette %s; "+
				"the case, the instructions or the model changed since it was recorded: re-record the case with --record %s",
				n, req.Method, req.URL.Path, v.file, v.flag)
		}
		onMiss := v.onMiss
		v.mu.Unlock()
		if onMiss != nil {
			onMiss()
		}
		return nil, fmt.Errorf("%w: %w", ErrReplayMismatch, err)
	}
	return resp, err
}

// Mismatch returns the replay mismatch message, or "".
func (v *vcr) Mismatch() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.mismatch
}

// Stop saves a recording.
func (v *vcr) Stop() error {
	if err := v.rec.Stop(); err != nil {
		return fmt.Errorf("eval: save cassette %s: %w", v.file, err)
	}
	return nil
}

// stripSecrets removes credentials from an interaction before it is saved.
func stripSecrets(i *cassette.Interaction) error {
	for _, h := range secretHeaders {
		i.Request.Headers.Del(h)
		i.Response.Headers.Del(h)
	}
	if u, err := url.Parse(i.Request.URL); err == nil && u.Query().Has("key") {
		q := u.Query()
		q.Del("key")
		u.RawQuery = q.Encode()
		i.Request.URL = u.String()
	}
	i.Request.Form.Del("key")
	return nil
}

// matchRequest matches on method, URL path and body (JSON bodies compare as
// values, so key order does not matter).
func matchRequest(r *http.Request, i cassette.Request) bool {
	if r.Method != i.Method {
		return false
	}
	u, err := url.Parse(i.URL)
	if err != nil || u.Path != r.URL.Path {
		return false
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		body, err = io.ReadAll(r.Body)
		if err != nil {
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return sameBody(body, []byte(i.Body))
}

func sameBody(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
