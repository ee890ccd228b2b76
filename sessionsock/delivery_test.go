package sessionsock

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/mailbox"
)

// TestDeliveryReachesTheHandler: a priority sent with SendWith is what the
// handler reads with DeliveryFrom, a plain Send reads none, and a line
// with a priority no receiver knows (or not a string) is refused with an
// error that names the three, its handler never called.
func TestDeliveryReachesTheHandler(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	l, _ := listen(t, Config{Handler: func(ctx context.Context, m mailbox.Message) error {
		mu.Lock()
		defer mu.Unlock()
		got[m.Text] = DeliveryFrom(ctx).Priority
		return nil
	}})
	ctx := testCtx(t)
	if _, err := SendWith(ctx, l.Path(), mailbox.Message{From: "a", Text: "one"}, Delivery{Priority: PriorityLater}); err != nil {
		t.Fatal(err)
	}
	if _, err := Send(ctx, l.Path(), mailbox.Message{From: "a", Text: "two"}); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, l.Path())
	for _, line := range []string{
		`{"from":"a","text":"three","priority":"urgent"}`,
		`{"from":"a","text":"four","priority":1}`,
	} {
		if reply := rc.roundTrip(line); !strings.Contains(reply, `"ok":false`) || !strings.Contains(reply, "priority") {
			t.Errorf("%s: reply %s, want a refusal about the priority", line, reply)
		}
	}
	if reply := rc.roundTrip(`{"from":"a","text":"five","priority":"now"}`); !strings.Contains(reply, `"ok":true`) {
		t.Errorf("priority now refused: %s", reply)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{"one": "later", "two": "", "five": "now"}
	if len(got) != len(want) {
		t.Fatalf("the handler saw %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: priority %q, want %q", k, got[k], v)
		}
	}
}
