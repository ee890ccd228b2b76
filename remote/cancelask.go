package remote

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
)

// A worker about to start a job asks its lead whether it cancelled it,
// on PREFIX.cancelled.<id>, and the lead answers with its signed
// cancellation — only for a job it cancelled, since only then does it
// listen there. The stored cancellation can be dropped by anyone with the
// run of the JetStream API, and the job stream's duplicate window shrunk
// and put back, so that a copy of a job the lead took out of the queue
// is stored again with the lead's own message id (keyattack6, C7 again):
// the lead's memory is what no one on the server can change. No
// listener (an older lead, a lead that cancelled nothing, a lead gone)
// is the server's "no responders", at once; a listener that does not
// answer with the lead's cancellation of this very job within
// leadAnswerWait (someone else listening) lets the job run, as before.
// A replayed answer can only be the lead's cancellation of the job
// itself: it is believed.

// leadAnswerWait bounds how long a worker waits for its lead's answer
// when someone listens on the job's subject but no answer is the lead's.
const leadAnswerWait = 2 * time.Second

// answerCancelled makes the lead answer, until it closes, every worker
// that asks whether it cancelled job id (submitted in an envelope signed
// sig): once a job.
func (c *Client) answerCancelled(id string, sig []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answering[id] {
		return nil
	}
	answer := c.signer.SealCancel(id, sig)
	if _, err := c.nc.Subscribe(c.s.n.cancelled+"."+id, func(m *nats.Msg) { _ = m.Respond(answer) }); err != nil {
		return err
	}
	c.answering[id] = true
	return nil
}

// leadCancelled asks job's lead whether it cancelled the job (envelope
// signature jobSig) and says whether its signed cancellation came back.
func (w *Worker) leadCancelled(ctx context.Context, job *Job, jobSig []byte, log *slog.Logger) bool {
	inbox := w.nc.NewRespInbox()
	sub, err := w.nc.SubscribeSync(inbox)
	if err != nil {
		log.Warn("cannot ask the lead whether it cancelled the job", "err", err)
		return false
	}
	defer sub.Unsubscribe()
	if err := w.nc.PublishRequest(w.s.n.cancelled+"."+job.ID, inbox, nil); err != nil {
		log.Warn("cannot ask the lead whether it cancelled the job", "err", err)
		return false
	}
	actx, cancel := context.WithTimeout(ctx, leadAnswerWait)
	defer cancel()
	refused := 0
	for {
		m, err := sub.NextMsgWithContext(actx)
		switch {
		case errors.Is(err, nats.ErrNoResponders):
			return false // no lead listens: none cancelled it
		case err != nil:
			if ctx.Err() == nil {
				log.Warn("someone listens where the lead answers for a job it cancelled, but no answer was the lead's; the job runs", "waited", leadAnswerWait, "refused", refused)
			}
			return false
		}
		if err := w.cfg.Keyring.OpenCancel(m.Data, job, jobSig); err == nil {
			return true
		} else if refused++; refused <= maxReports {
			log.Warn("an answer about the job's cancellation refused", "err", err)
		}
	}
}
