package mailbox

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watcher signals changes to one inbox. C carries coalesced wake-ups: after
// a receive, at least one change may have happened since the previous one.
// C is closed when the Watcher stops (Close or its context ending). Close is
// safe to call more than once and from any goroutine.
type Watcher struct {
	c      chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Watch starts watching agent's inbox. The inotify watch is in place when
// Watch returns, so a change after that is never missed. The watcher's
// goroutine ends when ctx ends or Close is called; Close waits for it.
func (d *Dir) Watch(ctx context.Context, agent string) (*Watcher, error) {
	if err := ValidateName(agent); err != nil {
		return nil, fmt.Errorf("mailbox watch: %w", err)
	}
	ok, err := d.Registered(agent)
	if err != nil {
		return nil, fmt.Errorf("mailbox watch %s: %w", agent, err)
	}
	if !ok {
		return nil, fmt.Errorf("mailbox watch %s: %w", agent, ErrUnknownRecipient)
	}
	path := d.inboxPath(agent)
	var fw *fsnotify.Watcher
	if !d.cfg.NoFSNotify {
		fw, err = fsnotify.NewWatcher()
		if err == nil {
			if err = fw.Add(d.cfg.Path); err != nil {
				fw.Close()
				fw = nil
			}
		}
		if err != nil {
			d.cfg.Logger.Warn("mailbox: fsnotify unavailable, polling", "dir", d.cfg.Path, "interval", d.cfg.PollInterval, "err", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{c: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go w.run(ctx, fw, path, d.cfg.PollInterval, d.cfg.Logger)
	return w, nil
}

// C returns the wake-up channel.
func (w *Watcher) C() <-chan struct{} { return w.c }

// Close stops the watcher and waits for its goroutine to end.
func (w *Watcher) Close() error {
	w.once.Do(w.cancel)
	<-w.done
	return nil
}

func (w *Watcher) signal() {
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// fileSig is what the poll compares: any append changes size and mtime, a
// compaction changes the inode.
type fileSig struct {
	id    fileID
	size  int64
	mtime time.Time
}

func statSig(path string) fileSig {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return fileSig{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileSig{}
	}
	id, _, _ := statFile(f)
	return fileSig{id: id, size: st.Size(), mtime: st.ModTime()}
}

func (w *Watcher) run(ctx context.Context, fw *fsnotify.Watcher, path string, interval time.Duration, log *slog.Logger) {
	defer close(w.done)
	defer close(w.c)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw != nil {
		defer fw.Close()
		events, errs = fw.Events, fw.Errors
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := statSig(path)
	name := filepath.Clean(path)
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Clean(ev.Name) == name {
				w.signal()
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// Usually a queue overflow: events were lost, so look again.
			log.Warn("mailbox: fsnotify error", "path", path, "err", err)
			w.signal()
		case <-tick.C:
			if sig := statSig(path); sig != last {
				last = sig
				w.signal()
			}
		}
	}
}
