package workflow

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
)

// scripted is a Spawner whose agents answer through a Go function, counting
// calls and the most that ran at once.
type scripted struct {
	answer  func(req AgentRequest) (string, error)
	cost    float64
	calls   atomic.Int64
	running atomic.Int64
	peak    atomic.Int64
	gate    chan struct{}       // when set, each agent waits for it to close
	onStart func(running int64) // when set, told how many run once one starts
	mu      sync.Mutex
	prompts []string
}

func (s *scripted) Spawn(ctx context.Context, req AgentRequest) (AgentResult, error) {
	s.calls.Add(1)
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if s.onStart != nil {
		s.onStart(n)
	}
	s.mu.Lock()
	s.prompts = append(s.prompts, req.Prompt)
	s.mu.Unlock()
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return AgentResult{}, ctx.Err()
		}
	}
	text, err := s.answer(req)
	return AgentResult{Text: text, Cost: s.cost}, err
}

// echo answers "done: <prompt's first line>".
func echo(req AgentRequest) (string, error) {
	line, _, _ := strings.Cut(req.Prompt, "\n")
	return "done: " + line, nil
}
