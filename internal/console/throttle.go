package console

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Wrong tokens are throttled per address: an address may present
// FailureBurst wrong tokens at once, then one per FailureEvery; past that,
// every token it presents (even the right one) is refused with 429 until
// its budget has grown back, so guessing is as slow as the budget.
const (
	FailureBurst = 10
	FailureEvery = 6 * time.Second
)

// maxThrottled bounds the addresses remembered; past it, addresses not
// remembered share one budget.
const maxThrottled = 10000

type throttle struct {
	mu       sync.Mutex
	now      func() time.Time
	addrs    map[netip.Prefix]*rate.Limiter
	overflow *rate.Limiter
}

func newThrottle(now func() time.Time) *throttle {
	return &throttle{now: now, addrs: map[netip.Prefix]*rate.Limiter{}, overflow: rate.NewLimiter(rate.Every(FailureEvery), FailureBurst)}
}

// addrOf is the address r came from: the IPv4 address, or the IPv6 /64
// (one host's addresses).
func addrOf(r *http.Request) netip.Prefix {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// limiter is the budget of a; the caller holds mu.
func (t *throttle) limiter(a netip.Prefix, create bool) *rate.Limiter {
	if l, ok := t.addrs[a]; ok {
		return l
	}
	if len(t.addrs) >= maxThrottled && !create {
		return t.overflow
	}
	if !create {
		return nil
	}
	if len(t.addrs) >= maxThrottled {
		now := t.now()
		for k, l := range t.addrs {
			if l.TokensAt(now) >= FailureBurst {
				delete(t.addrs, k)
			}
		}
		if len(t.addrs) >= maxThrottled {
			return t.overflow
		}
	}
	l := rate.NewLimiter(rate.Every(FailureEvery), FailureBurst)
	t.addrs[a] = l
	return l
}

// blocked reports whether the address of r has no wrong tries left.
func (t *throttle) blocked(r *http.Request) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.limiter(addrOf(r), false)
	return l != nil && l.TokensAt(t.now()) < 1
}

// failed counts a wrong token from the address of r.
func (t *throttle) failed(r *http.Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.limiter(addrOf(r), true).AllowN(t.now(), 1)
}
