package sessionsock_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// A session listens on its socket; another process sends to uds:<path>.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	home, err := os.MkdirTemp("", "cohort")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(home)

	delivered := make(chan mailbox.Message, 1)
	l, err := sessionsock.Listen(ctx, sessionsock.Config{
		Dir:       filepath.Join(home, "sessions"),
		SessionID: "0b4c7f3e-58a2-4f5e-9d1a-6c2b8e7f9a10",
		Handler: func(ctx context.Context, m mailbox.Message) error {
			delivered <- m // a real session queues it for its lead
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()

	if _, err := sessionsock.Send(ctx, l.Path(), mailbox.Message{From: "alice@review", Text: "tests pass on my side"}); err != nil {
		fmt.Println(err)
		return
	}
	m := <-delivered
	fmt.Printf("%s → %s: %s\n", m.From, m.To, m.Text)
	// Output: alice@review → team-lead: tests pass on my side
}
