package sessionsock

import (
	"context"
	"encoding/json"
	"fmt"
)

// Delivery priorities a sender may ask for (SendMessage's
// options.priority). What each does is the receiver's to decide; a Cohort
// session does this (package assemble):
//
//   - PriorityNow: ahead of every message already waiting, at the lead's
//     next step; an idle lead wakes with it. It does not cut the running
//     turn short: another session is not the user, and an interrupt would
//     lose the work in flight.
//   - PriorityNext (the default): after what already waits, at the lead's
//     next step, joining its running turn.
//   - PriorityLater: held while the lead's turn runs, and handed over when
//     it ends, so it starts a turn of its own; an idle lead gets it at once.
//
// An idle lead wakes in a session whose front end stays to show the turn
// (the terminal UI, a --bg session, a stream-json or SDK session); a
// print-mode session (-p) that has answered refuses the message instead,
// saying so (package assemble, wake.go).
const (
	PriorityNow   = "now"
	PriorityNext  = "next"
	PriorityLater = "later"
)

// Delivery is how a sender asks for a message to be delivered: the
// fields a message line may carry beside the mailbox format's.
type Delivery struct {
	Priority string `json:"priority,omitempty"`
	// NotifyIdle is the sender's own session socket: it asks for one
	// notice there when the receiving session next goes idle, or exits
	// (SendMessage's notify_when_idle).
	NotifyIdle string `json:"notify_idle,omitempty"`
	// SubscribeOnly marks a line that only subscribes: its text is not
	// delivered.
	SubscribeOnly bool `json:"subscribe_only,omitempty"`
}

// Check reports a Delivery whose fields hold values no receiver knows.
func (d Delivery) Check() error {
	switch d.Priority {
	case "", PriorityNow, PriorityNext, PriorityLater:
	default:
		return fmt.Errorf("unknown priority %q: use now, next or later", d.Priority)
	}
	if d.SubscribeOnly && d.NotifyIdle == "" {
		return fmt.Errorf("subscribe_only needs notify_idle, the socket to notify")
	}
	return nil
}

type deliveryKey struct{}

// DeliveryFrom returns the Delivery the message a Handler is called for
// was sent with (the zero Delivery when it named none).
func DeliveryFrom(ctx context.Context) Delivery {
	d, _ := ctx.Value(deliveryKey{}).(Delivery)
	return d
}

// withDelivery adds d's fields to a message line (a JSON object).
func withDelivery(line []byte, d Delivery) ([]byte, error) {
	if d == (Delivery{}) {
		return line, nil
	}
	extra, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	if len(line) < 2 || line[len(line)-1] != '}' {
		return nil, fmt.Errorf("a message line is not a JSON object")
	}
	out := append([]byte(nil), line[:len(line)-1]...)
	if len(line) > 2 {
		out = append(out, ',')
	}
	return append(out, extra[1:]...), nil
}
