package console

import (
	"context"
)

// wakeWatch asks triage watch for a pass now (ledger.Wake), for an action
// only the daemon completes; failing to wake it is logged, not fatal: its
// next pass does the work.
func (s *Server) wakeWatch(ctx context.Context) {
	if err := s.cfg.Ledger.Wake(context.WithoutCancel(ctx)); err != nil {
		s.log.Warn("console: could not wake triage watch; it acts at its next pass", "err", err)
	}
}
