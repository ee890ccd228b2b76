package clitest

import (
	"strings"
	"sync"
)

// Seen keeps what each conversation of a scripted model was shown, by a
// key the policy picks (a teammate's name, "lead"): a policy records with
// Add as requests arrive, on the fake API's goroutines, and the test reads
// with All after the run. Safe for concurrent use.
type Seen struct {
	mu sync.Mutex
	m  map[string][]string
}

// Add records text under key.
func (s *Seen) Add(key, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]string{}
	}
	s.m[key] = append(s.m[key], text)
}

// All returns what was recorded under key, one entry a line.
func (s *Seen) All(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.m[key], "\n")
}
