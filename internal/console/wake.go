package console

import (
	"context"
	"net/http"
)

// wakeWatch asks triage watch for a pass now (ledger.Wake), for an action
// only the daemon completes; failing to wake it is logged, not fatal: its
// next pass does the work.
func (s *Server) wakeWatch(r *http.Request) {
	if err := s.cfg.Ledger.Wake(context.WithoutCancel(r.Context())); err != nil {
		s.log.Warn("console: could not wake triage watch; it acts at its next pass", "err", err)
	}
}
