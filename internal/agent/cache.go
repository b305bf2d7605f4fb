// Gemini's explicit context caching of the stable prefix of the loop's
// requests: the system instruction, the function declarations and the
// tool configuration, which are the same for every email of a scenario.

package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Defaults of ContextCache.
const (
	// DefaultCacheTTL is how long a cache lives unless refreshed.
	DefaultCacheTTL = time.Hour
	// DefaultCacheMinTokens is the smallest prefix Gemini caches
	// explicitly on Flash (1,024 tokens; Pro needs more, and refuses a
	// smaller one, which is then sent uncached).
	DefaultCacheMinTokens = 1024
	// cacheRetry is how long a prefix whose cache could not be created is
	// sent uncached before the next attempt.
	cacheRetry = time.Minute
)

// ContextCache keeps one Gemini context cache per stable prefix (a model,
// a system instruction, function declarations and a tool configuration:
// per scenario and instructions version, since either changes the
// prefix), created on first use through the SDK's Caches API, extended
// before it expires, and never holding anything but that prefix: no
// email's text reaches a cache. A prefix estimated below MinTokens is not
// cached. When a cache cannot be created or used, the request is sent
// with its prefix, uncached, and a warning is logged.
type ContextCache struct {
	Client *genai.Client
	// TTL is a cache's lifetime (default DefaultCacheTTL); it is extended
	// by another TTL when less than a quarter of it is left.
	TTL time.Duration
	// MinTokens is the smallest prefix cached (default
	// DefaultCacheMinTokens), estimated as a quarter of its characters.
	MinTokens int
	Logger    *slog.Logger
	Now       func() time.Time

	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	mu     sync.Mutex // held while the cache is created or extended
	name   string
	expire time.Time
	retry  time.Time // no attempt before
	small  bool      // the prefix is below MinTokens
}

func (c *ContextCache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *ContextCache) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// cacheable reports whether config's prefix may be cached: a loop call
// (function declarations, a system instruction, no structured output),
// not already naming a cache.
func cacheable(config *genai.GenerateContentConfig) bool {
	return config != nil && config.SystemInstruction != nil && len(config.Tools) > 0 &&
		config.CachedContent == "" && config.ResponseSchema == nil && config.ResponseJsonSchema == nil
}

// prefixKey is the key of config's prefix for model, and its estimated
// tokens.
func prefixKey(model string, config *genai.GenerateContentConfig) (string, int, error) {
	b, err := json.Marshal(struct {
		Model             string            `json:"model"`
		SystemInstruction *genai.Content    `json:"systemInstruction"`
		Tools             []*genai.Tool     `json:"tools"`
		ToolConfig        *genai.ToolConfig `json:"toolConfig"`
	}{model, config.SystemInstruction, config.Tools, config.ToolConfig})
	if err != nil {
		return "", 0, err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), (utf8.RuneCount(b) + 3) / 4, nil
}

// name returns the cache serving config's prefix for model, creating or
// extending it as needed; "" when the prefix is sent uncached.
func (c *ContextCache) name(ctx context.Context, model string, config *genai.GenerateContentConfig) (string, string) {
	key, tokens, err := prefixKey(model, config)
	if err != nil {
		return "", ""
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	e := c.entries[key]
	if e == nil {
		e = &cacheEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	ttl := cmpOr(c.TTL, DefaultCacheTTL)
	now := c.now()
	switch {
	case e.small:
		return "", key
	case e.name != "" && now.Before(e.expire.Add(-ttl/4)):
		return e.name, key
	case e.name != "" && now.Before(e.expire):
		got, err := c.Client.Caches.Update(ctx, e.name, &genai.UpdateCachedContentConfig{TTL: ttl})
		if err == nil {
			e.expire = expiry(got, now, ttl)
			return e.name, key
		}
		c.log().WarnContext(ctx, "context cache not extended; creating another", "cache", e.name, "err", err)
		e.name = ""
	case now.Before(e.retry):
		return "", key
	}
	if min := cmpOr(c.MinTokens, DefaultCacheMinTokens); tokens < min {
		e.small = true
		c.log().InfoContext(ctx, "prefix below the context cache's minimum: sent uncached", "model", model, "tokens_estimated", tokens, "min_tokens", min)
		return "", key
	}
	got, err := c.Client.Caches.Create(ctx, model, &genai.CreateCachedContentConfig{
		TTL:               ttl,
		DisplayName:       "triage " + key[:16],
		SystemInstruction: config.SystemInstruction,
		Tools:             config.Tools,
		ToolConfig:        config.ToolConfig,
	})
	if err != nil || got == nil || got.Name == "" {
		if err == nil {
			err = errors.New("no cache name in the answer")
		}
		e.retry = now.Add(cacheRetry)
		c.log().WarnContext(ctx, "context cache not created: the prefix is sent uncached", "model", model, "retry_after", cacheRetry, "err", err)
		return "", key
	}
	e.name, e.expire = got.Name, expiry(got, now, ttl)
	c.log().InfoContext(ctx, "context cache created", "cache", e.name, "model", model, "tokens_estimated", tokens, "expires", e.expire)
	return e.name, key
}

// forget drops the cache of key (it could not be used): the next request
// creates another.
func (c *ContextCache) forget(key, name string) {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	if e.name == name {
		e.name = ""
	}
	e.mu.Unlock()
}

// expiry is when got expires: its expireTime, else now + ttl.
func expiry(got *genai.CachedContent, now time.Time, ttl time.Duration) time.Time {
	if got != nil && !got.ExpireTime.IsZero() {
		return got.ExpireTime
	}
	return now.Add(ttl)
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// cacheRefused reports whether err is Gemini refusing a request for its
// cache (gone, expired, not ours, or not usable with the request).
func cacheRefused(err error) bool {
	var ae genai.APIError
	if !errors.As(err, &ae) {
		var pae *genai.APIError
		if !errors.As(err, &pae) || pae == nil {
			return false
		}
		ae = *pae
	}
	return (ae.Code == 400 || ae.Code == 403 || ae.Code == 404) && strings.Contains(strings.ToLower(ae.Message), "cache")
}
