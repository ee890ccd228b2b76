package sdkproto

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/cohort-dev/cohort"
)

// promptTurns remembers the uuid of the prompt each Run started with, so
// that rewind_files can name a turn by its user message.
type promptTurns struct {
	mu   sync.Mutex
	runs []string // in order; "" for a prompt without a uuid
}

// started records the prompt of the Run that starts now.
func (p *promptTurns) started(uuid string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs = append(p.runs, uuid)
}

// find is the 1-based Run of uuid among n Runs, or 0.
func (p *promptTurns) find(uuid string) (k, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if uuid == "" {
		return 0, len(p.runs)
	}
	return slices.Index(p.runs, uuid) + 1, len(p.runs)
}

// rewindFiles answers rewind_files ({user_message_id, dry_run}) as Claude
// Code does: {canRewind, error, filesChanged}. The files go back as they
// were before the turn that user message started; a rewind that cannot be
// done is canRewind false with the reason, not a failed request.
func (srv *server) rewindFiles(ctx context.Context, s *cohort.Session, m *inbound) {
	var in struct {
		UserMessageID string `json:"user_message_id"`
		DryRun        bool   `json:"dry_run"`
	}
	_ = json.Unmarshal(m.Request, &in)
	answer := func(rep *cohort.RewindReport, err error) {
		body := map[string]any{"canRewind": err == nil, "filesChanged": []string{}}
		if err != nil {
			body["error"] = err.Error()
		}
		if rep != nil {
			body["filesChanged"] = append(append([]string{}, rep.Write...), rep.Delete...)
		}
		srv.succeed(m.RequestID, body)
	}
	k, runs := srv.turns.find(in.UserMessageID)
	if k == 0 {
		answer(nil, fmt.Errorf("no prompt of this session has the uuid %q", in.UserMessageID))
		return
	}
	// The session numbers its turns on from earlier processes (a resumed
	// session): the last of its turns is this server's last Run.
	list, err := s.Rewind(ctx, cohort.RewindRequest{})
	if err != nil {
		answer(nil, err)
		return
	}
	last := 0
	for _, t := range list.Turns {
		last = max(last, t.Turn)
	}
	answer(s.Rewind(ctx, cohort.RewindRequest{Turn: last - runs + k, DryRun: in.DryRun}))
}
