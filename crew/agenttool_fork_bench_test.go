package crew

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// BenchmarkForkFanOut measures prompt-cache sharing in a fan-out of N
// forks against the fake's cache simulator (minimum cacheable prefix 1,024
// tokens): read_ratio is the smallest share of the shared prefix (all but
// the directive block) that forks 2..N read from cache; fork1_new_tokens is
// what the first fork wrote beyond the parent's cached prefix.
//
//	go test -run '^$' -bench ForkFanOut -benchtime 3x ./agenttool/
func BenchmarkForkFanOut(b *testing.B) {
	for _, n := range []int{2, 8, 32} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var minRatio, firstNew float64
			for b.Loop() {
				minRatio, firstNew = forkCacheFigures(b, n)
			}
			b.ReportMetric(minRatio, "read_ratio")
			b.ReportMetric(firstNew, "fork1_new_tokens")
		})
	}
}

// forkCacheFigures runs one fan-out of n forks and returns the smallest
// cache-read share of forks 2..n and the first fork's cache writes.
func forkCacheFigures(tb testing.TB, n int) (minRatio, firstNew float64) {
	r, _ := forkRig(tb, n, fakeapi.CacheConfig{MinTokens: 1024})
	r.send("fan out into forks")
	r.notified("fan out")
	forks := forkRequests(r.srv)
	if len(forks) != n {
		tb.Fatalf("saw %d fork requests, want %d", len(forks), n)
	}
	var first fakeapi.Recorded
	for _, rec := range forks {
		if first.Request == nil || rec.Index < first.Index {
			first = rec
		}
	}
	minRatio = 1
	for _, rec := range forks {
		if rec.Index == first.Index {
			continue
		}
		shared := sharedPrefixTokens(tb, r.srv, rec.Request)
		if ratio := float64(rec.Usage.CacheReadInputTokens) / float64(shared); ratio < minRatio {
			minRatio = ratio
		}
	}
	return minRatio, float64(first.Usage.CacheCreationInputTokens)
}

// sharedPrefixTokens asks the fake's count_tokens endpoint (the estimate
// its cache simulator uses) for the size of req without its last block: the
// prefix sibling forks share, up to and including the placeholders.
func sharedPrefixTokens(tb testing.TB, srv *fakeapi.Server, req *fakeapi.Request) int {
	tb.Helper()
	msgs := slices.Clone(req.Messages)
	last := msgs[len(msgs)-1]
	last.Content = last.Content[:len(last.Content)-1]
	msgs[len(msgs)-1] = last
	body := mustMarshal(tb, map[string]any{"model": req.Model, "system": req.System, "tools": req.Tools, "messages": msgs})
	hreq, err := http.NewRequestWithContext(tb.Context(), http.MethodPost, srv.URL+"/v1/messages/count_tokens", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	hreq.Header.Set("content-type", "application/json")
	hreq.Header.Set("anthropic-version", "2023-06-01")
	hreq.Header.Set("x-api-key", "k")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.InputTokens == 0 {
		tb.Fatalf("count_tokens: status %d, %v", resp.StatusCode, err)
	}
	return out.InputTokens
}
