package mailbox

import "context"

// Transport moves messages between the agents of a team. Dir implements it
// with files on one machine; a NATS JetStream implementation (subjects
// cohort.team.{team}.inbox.{agent}) will implement it across machines with
// the same Message schema and the same at-least-once + dedupe contract.
// Implementations are safe for concurrent use.
type Transport interface {
	// Register creates agent's inbox; it is idempotent.
	Register(ctx context.Context, agent string) error
	// Append stores m in the inbox of m.To and returns it with id and
	// timestamp assigned. An agent that was never registered gives
	// ErrUnknownRecipient; no inbox is created.
	Append(ctx context.Context, m Message) (Message, error)
	// OpenInbox opens agent's inbox for its single consumer.
	OpenInbox(ctx context.Context, agent string) (Inbox, error)
}

// Inbox is one agent's consuming end. See Reader for the file version's
// contract; other implementations keep the same one.
type Inbox interface {
	// Read returns new messages without waiting.
	Read(ctx context.Context) ([]Message, error)
	// Receive waits until at least one new message arrives.
	Receive(ctx context.Context) ([]Message, error)
	// Ack records that messages were handled; unacknowledged messages are
	// delivered again after the consumer restarts.
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
