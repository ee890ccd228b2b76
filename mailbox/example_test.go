package mailbox_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/cohort-dev/cohort/mailbox"
)

// A teammate sends the lead a message; the lead receives it, shows it to its
// model as a teammate-message, and acknowledges it.
func Example() {
	dir, err := os.MkdirTemp("", "inboxes")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	box, err := mailbox.OpenDir(mailbox.Config{Path: dir})
	if err != nil {
		log.Fatal(err)
	}
	for _, agent := range []string{"team-lead", "alice"} {
		if err := box.Register(ctx, agent); err != nil {
			log.Fatal(err)
		}
	}
	_, err = box.Append(ctx, mailbox.Message{
		From: "alice", To: "team-lead", Color: "blue", Summary: "status", Text: "all tests pass",
	})
	if err != nil {
		log.Fatal(err)
	}

	inbox, err := box.OpenReader("team-lead")
	if err != nil {
		log.Fatal(err)
	}
	defer inbox.Close()
	msgs, err := inbox.Receive(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		fmt.Println(mailbox.Render(m))
		if err := inbox.Ack(ctx, m.ID); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// <teammate-message from="alice" color="blue" summary="status">all tests pass</teammate-message>
}

// Structured messages carry a typed payload; the receiver switches on it.
func ExampleMessage_Payload() {
	m, err := mailbox.NewMessage("team-lead", "alice", mailbox.ShutdownRequest{RequestID: "req-7", Reason: "all tasks are done"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Type, m.Text)

	p, err := m.Payload()
	if err != nil {
		log.Fatal(err)
	}
	switch p := p.(type) {
	case mailbox.ShutdownRequest:
		reply, _ := mailbox.NewMessage("alice", "team-lead", mailbox.ShutdownResponse{RequestID: p.RequestID, Approve: true})
		fmt.Println(reply.Type, reply.Text)
	}
	// Output:
	// shutdown_request {"type":"shutdown_request","request_id":"req-7","reason":"all tasks are done"}
	// shutdown_response {"type":"shutdown_response","request_id":"req-7","approve":true}
}
