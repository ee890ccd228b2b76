package assemble

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/sessionsock"
	"github.com/cohort-dev/cohort/teammate"
)

// peerSessions lists the other sessions of this machine that answer on
// their socket (teammate.LeadConfig.Peers), named from the background
// sessions' records where one has a record: a session started in a
// terminal has only its session id.
func (s *Session) peerSessions(ctx context.Context) []teammate.Peer {
	dir := filepath.Join(s.Process.Paths.CohortHome, "sessions")
	paths, _ := sessionsock.Live(ctx, dir, s.socket)
	named := map[string]bgsession.Record{}
	if _, err := os.Stat(filepath.Join(s.Process.Paths.CohortHome, "bg")); err != nil {
		// no background session was ever started: nothing has a name
	} else if reg, err := bgsession.Open(s.Process.Paths.CohortHome); err == nil {
		recs, _ := reg.List()
		for _, r := range recs {
			if r.SessionID != "" {
				named[r.SessionID] = r
			}
		}
	}
	out := make([]teammate.Peer, 0, len(paths))
	for _, p := range paths {
		sid := strings.TrimSuffix(filepath.Base(p), ".sock")
		rec := named[sid]
		out = append(out, teammate.Peer{Name: rec.Name, ID: rec.ID, SessionID: sid, Socket: p})
	}
	return out
}
