package mailbox

import "context"

// Transport moves messages between the agents of a team. Dir implements it
// with files on one machine; package mailbox/jetstream implements it across
// machines on NATS JetStream with the same Message schema, the same ids and
// the same at-least-once + dedupe contract. Implementations are safe for
// concurrent use. The teammate loop, the lead and the team store use only
// this interface, so a team runs the same on either.
type Transport interface {
	// Register creates agent's inbox; it is idempotent.
	Register(ctx context.Context, agent string) error
	// Append stores m in the inbox of m.To and returns it with id and
	// timestamp assigned. When it returns nil the message is durable. An
	// agent that was never registered gives ErrUnknownRecipient; no inbox
	// is created. A retry with the same m.ID is delivered at most once.
	Append(ctx context.Context, m Message) (Message, error)
	// OpenInbox opens agent's inbox for its single consumer; a second live
	// consumer gives ErrReaderBusy.
	OpenInbox(ctx context.Context, agent string) (Inbox, error)
	// Pending counts the messages in agent's inbox its consumer has not
	// acknowledged: a snapshot, callable from any process.
	Pending(ctx context.Context, agent string) (int, error)
}

// Inbox is one agent's consuming end: it reads from its durable position
// (the cursor), waits for news, and acknowledges what was recorded. See
// Reader for the file version's contract; other implementations keep the
// same one.
type Inbox interface {
	// Agent names the inbox's owner.
	Agent() string
	// Read returns new messages without waiting. A message returned once
	// is not returned again by this Inbox; an id already acknowledged is
	// never returned, not even by an Inbox opened anew on the same
	// machine (Dir keeps recent ids in the cursor, jsmail in a seen-id
	// record), so a replay cannot pass whatever delivered it.
	Read(ctx context.Context) ([]Message, error)
	// Receive waits until at least one new message arrives (the wake-up),
	// then returns what Read would.
	Receive(ctx context.Context) ([]Message, error)
	// Ack records that messages were handled (recorded in the owner's
	// transcript); unacknowledged messages are delivered again after the
	// consumer restarts. Acknowledging an id this Inbox never returned
	// gives ErrNotDelivered.
	Ack(ctx context.Context, ids ...string) error
	// Close releases the inbox for another consumer.
	Close() error
}

var _ Inbox = (*Reader)(nil)

// OpenInbox implements Transport with OpenReader.
func (d *Dir) OpenInbox(_ context.Context, agent string) (Inbox, error) {
	r, err := d.OpenReader(agent)
	if err != nil {
		return nil, err
	}
	return r, nil
}
