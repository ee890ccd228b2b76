package openai

import (
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestALocalServerThatIsNotRunningFailsFast is issue 17 item 11 for the
// OpenAI providers: a refused connection at a base URL that never answered
// fails at once, naming it.
func TestALocalServerThatIsNotRunningFailsFast(t *testing.T) {
	srv := fake(t, fakeapi.Config{})
	base := srv.URL
	srv.Close()
	w := &waits{}
	m := model(t, base, Chat, w, nil) // at base + "/v1"
	_, err := drain(t, m, ask("hi"))
	if err == nil {
		t.Fatal("no error")
	}
	contains(t, err.Error(), "nothing listens at "+base+"/v1 (connection refused)")
	if len(w.all()) != 0 {
		t.Fatalf("waited %v; want no retry", w.all())
	}
}
