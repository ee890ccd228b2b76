package teammate

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// signal is a broadcast: Changed returns a channel that is closed at the
// next notify. Safe for concurrent use.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Changed returns a channel closed the next time the team's state may have
// changed: a teammate's status file was written (in this process or
// another), or a teammate was found dead. The lead's quiet check takes the
// channel, then reads Busy, then waits on it, so a change between the two
// is never missed.
func (l *Lead) Changed() <-chan struct{} { return l.changes.Changed() }

// watchStatus signals l.changes whenever a file in the team's status
// directory changes, until ctx ends. Without fsnotify it returns at once and
// the callers' fallback polling remains.
func (l *Lead) watchStatus(ctx context.Context, teamDir string) {
	dir := filepath.Join(teamDir, "status")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		l.cfg.Logf("teammate: status directory: %v", err)
		return
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		l.cfg.Logf("teammate: fsnotify unavailable, the lead polls the team's state: %v", err)
		return
	}
	defer fw.Close()
	if err := fw.Add(dir); err != nil {
		l.cfg.Logf("teammate: watch %s: %v", dir, err)
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) || ev.Has(fsnotify.Rename) {
				l.changes.notify()
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return
			}
			l.cfg.Logf("teammate: watching %s: %v", dir, err)
			l.changes.notify() // events may have been dropped
		}
	}
}
