package jsmail

import (
	"context"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go/jetstream"
)

// deliveries follows the consumer sequences of what the inbox's consumer
// hands over. The server numbers every delivery of a consumer, a
// redelivery included, one after another; the inbox is the consumer's
// only reader, so it sees them all. A number it never sees went to
// another client that pulled from the consumer by its name (any client
// of the JetStream API may: keyattack6), and what that client
// acknowledged the work queue deleted: a message its sender was told was
// stored that the owner never got. It is reported (package doc,
// "Nothing lost").
type deliveries struct {
	accounted uint64 // the highest consumer sequence seen or reported missing
	// sample is the consumer's last delivered sequence as the server gave
	// it at a check at least tailGrace ago (at): a delivery the server
	// made by then has arrived, unless it went elsewhere.
	sample uint64
	at     time.Time
	untold int // deliveries missed that the lead was not yet told of
}

// reset starts counting again: a consumer made anew numbers its
// deliveries from 1.
func (d *deliveries) reset() { *d = deliveries{untold: d.untold} }

// handed notes a delivery's consumer sequence and says how many
// deliveries before it went elsewhere (from, to: their sequences).
func (d *deliveries) handed(seq uint64) (missed, from, to uint64) {
	if seq > d.accounted+1 {
		missed, from, to = seq-d.accounted-1, d.accounted+1, seq-1
		d.untold += int(missed)
	}
	d.accounted = max(d.accounted, seq)
	return missed, from, to
}

// checked notes the consumer's last delivered sequence as the server
// gives it at now, and says how many deliveries the server had made by
// a sample at least grace old never arrived (the ones since may still be
// on the wire or in the client's buffer). A delivery that goes elsewhere
// last, with none after it, is found so.
func (d *deliveries) checked(delivered uint64, now time.Time, grace time.Duration) (missed, from, to uint64) {
	if !d.at.IsZero() && now.Sub(d.at) < grace {
		return 0, 0, 0
	}
	if prev := d.sample; !d.at.IsZero() && prev > d.accounted {
		missed, from, to = prev-d.accounted, d.accounted+1, prev
		d.untold += int(missed)
		d.accounted = prev
	}
	d.sample, d.at = delivered, now
	return missed, from, to
}

// noteDelivery is deliver's first step: a gap in the consumer sequences
// is reported at once.
func (in *Inbox) noteDelivery(msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		return // not a consumer's delivery: refused below
	}
	in.mu.Lock()
	missed, from, to := in.handedOut.handed(meta.Sequence.Consumer)
	in.mu.Unlock()
	in.reportMissed(missed, from, to)
}

// noteChecked is check's: deliveries the server had made by a check at
// least Transport.tailGrace ago that never came are reported.
func (in *Inbox) noteChecked(info *jetstream.ConsumerInfo) {
	in.mu.Lock()
	missed, from, to := in.handedOut.checked(info.Delivered.Consumer, time.Now(), in.t.tailGrace)
	in.mu.Unlock()
	in.reportMissed(missed, from, to)
}

func (in *Inbox) reportMissed(missed, from, to uint64) {
	if missed == 0 {
		return
	}
	in.problem(fmt.Sprintf("%d deliveries of the inbox's consumer %s (consumer sequences %d to %d) never reached this inbox: another client pulls from the consumer by its name, and what it acknowledged is gone from the stream — messages to %s whose senders were told they were stored may be lost (see that only cohort processes may use the server's JetStream API)",
		missed, consumerName(in.agent), from, to, in.agent))
}

// tellLead sends the lead, from the owner, how many deliveries missed the
// inbox since it last did (the watcher calls it after each check): a
// sender believes what it sent was delivered.
func (in *Inbox) tellLead(ctx context.Context) {
	in.mu.Lock()
	n := in.handedOut.untold
	in.handedOut.untold = 0
	in.mu.Unlock()
	if n == 0 || in.agent == in.t.cfg.Lead {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	text := fmt.Sprintf("[mailbox] %d deliveries of my inbox went to another client pulling from its consumer %s: messages sent to me may be lost; send again what I should have had", n, consumerName(in.agent))
	if _, err := in.t.Append(ctx, mailbox.Message{From: in.agent, To: in.t.cfg.Lead, Text: text}); err != nil {
		in.t.cfg.Logger.Debug("mailbox: telling the lead", "agent", in.agent, "err", err)
	}
}
