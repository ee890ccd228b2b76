package mailbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/gofrs/flock"
)

// Compact rewrites the inbox without its acknowledged prefix. Ack calls it
// once the prefix passes Config.CompactBytes; calling it directly is only
// needed to reclaim space sooner.
//
// Compaction holds the append lock, so no append can land in the old file
// after the copy: a writer that was waiting opens the new file once the lock
// is free. The cursor is rewritten, with the old position kept as "prev",
// before the rename, so a crash at any step resumes at the right place.
func (r *Reader) Compact(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.acked == 0 {
		return nil
	}
	lk, err := lockPath(ctx, r.d.lockFile(r.agent), false, r.d.cfg.LockTimeout)
	if errors.Is(err, errNoLockFile) {
		err = ErrUnknownRecipient
	}
	if err == nil {
		err = r.compactHoldingLock()
		lk.Unlock()
	}
	if err != nil {
		return fmt.Errorf("mailbox compact %s: %w", r.agent, err)
	}
	return nil
}

// maybeCompact compacts once the acknowledged prefix passes CompactBytes.
// It does not wait for writers: if the append lock is busy it tries again at
// the next Ack, so a consumer is never held up behind a stream of appends.
// Only when the prefix has grown past four times the threshold does it wait
// (bounded by ctx and LockTimeout), so the file cannot grow without bound.
func (r *Reader) maybeCompact(ctx context.Context) {
	limit := r.d.cfg.CompactBytes
	if limit <= 0 || r.acked < limit {
		return
	}
	var lk *flock.Flock
	var err error
	if r.acked < 4*limit {
		lk, err = tryLockExisting(r.d.lockFile(r.agent))
		if lk == nil && err == nil {
			return // busy: next time
		}
	} else {
		lk, err = lockPath(ctx, r.d.lockFile(r.agent), false, r.d.cfg.LockTimeout)
	}
	if err == nil {
		err = r.compactHoldingLock()
		lk.Unlock()
	}
	if err != nil {
		r.report(0, fmt.Sprintf("compaction failed, will retry: %v", err))
	}
}

// compactHoldingLock does the compaction; the caller holds r.mu and the
// append lock.
func (r *Reader) compactHoldingLock() error {
	f, err := os.OpenFile(r.path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	id, size, err := statFile(f)
	if err != nil {
		return err
	}
	if id != r.file {
		return nil // the next Read notices the replacement and recovers
	}
	tmpPath := r.path + ".compact"
	newID, err := copyTail(tmpPath, f, r.acked, size-r.acked)
	if err != nil {
		return err
	}
	c := r.cursor()
	old := c.position
	c.position = position{File: newID}
	c.Prev = &old
	if err := saveCursor(r.cursorPath, c); err != nil {
		os.Remove(tmpPath)
		return err
	}
	if err := os.Rename(tmpPath, r.path); err != nil {
		// The cursor's prev entry still names the live file, so it stays
		// valid; the next persist drops the stale new identity.
		os.Remove(tmpPath)
		return err
	}
	shift, lines := r.acked, r.ackLine
	r.file, r.acked, r.ackLine = newID, 0, 0
	r.readOff -= shift
	r.readLine -= lines
	for _, e := range r.inflight {
		e.end -= shift
		e.line -= lines
	}
	return atomicfile.SyncDir(r.d.cfg.Path)
}

// copyTail writes n bytes of src from off into a new file at path, fsyncs
// it and returns its identity.
func copyTail(path string, src *os.File, off, n int64) (id fileID, err error) {
	os.Remove(path) // left by a crashed compaction
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fileID{}, err
	}
	defer func() {
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	if _, err = io.Copy(dst, io.NewSectionReader(src, off, n)); err != nil {
		return fileID{}, err
	}
	if err = dst.Sync(); err != nil {
		return fileID{}, err
	}
	id, _, err = statFile(dst)
	return id, err
}
