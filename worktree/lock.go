package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// Files Cohort keeps in a worktree's administrative directory
// (<common>/worktrees/<id>/). git deletes that directory with the worktree,
// so the records never outlive what they describe.
const (
	baseFile  = "cohort-base"  // the commit the worktree started from
	linksFile = "cohort-links" // symlinks Cohort made, one per line
	keptFile  = "cohort-kept"  // present once an agent finished and kept it
)

// lockReason is what `git worktree lock --reason` records for a worktree in
// use: "cohort pid=<pid> session=<id> agent=<id> host=<host> base=<sha>".
type lockReason struct {
	PID     int
	Session string
	Agent   string
	Host    string
	Base    string
}

func (r lockReason) String() string {
	return fmt.Sprintf("cohort pid=%d session=%s agent=%s host=%s base=%s",
		r.PID, sanitizeField(r.Session), sanitizeField(r.Agent), sanitizeField(r.Host), r.Base)
}

// parseLockReason reads a reason written by String. ok is false for locks
// Cohort did not take (a user's own `git worktree lock`).
func parseLockReason(s string) (r lockReason, ok bool) {
	fields := strings.Fields(s)
	if len(fields) == 0 || fields[0] != "cohort" {
		return lockReason{}, false
	}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "pid":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return lockReason{}, false
			}
			r.PID = n
		case "session":
			r.Session = v
		case "agent":
			r.Agent = v
		case "host":
			r.Host = v
		case "base":
			r.Base = v
		}
	}
	return r, r.PID > 0
}

// sanitizeField keeps a value to one space-free token.
func sanitizeField(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == '=' || r == 0x7f {
			return '_'
		}
		return r
	}, s)
}

// readLock returns the lock reason of the worktree whose administrative
// directory is admin, and whether it is locked at all.
func readLock(admin string) (reason string, locked bool, err error) {
	data, err := ownread.GitState(filepath.Join(admin, "locked"), ownread.MaxGitRef)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("worktree: read lock: %w", err)
	}
	return strings.TrimSpace(string(data)), true, nil
}

// readMeta returns the recorded base commit and symlinks of a worktree.
// A missing record yields zero values.
func readMeta(admin string) (base string, links []string) {
	if data, err := ownread.GitState(filepath.Join(admin, baseFile), ownread.MaxGitRef); err == nil {
		base = strings.TrimSpace(string(data))
	}
	if data, err := ownread.GitState(filepath.Join(admin, linksFile), ownread.MaxGitRef); err == nil {
		for l := range strings.SplitSeq(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				links = append(links, l)
			}
		}
	}
	if base == "" {
		if r, ok := parseLockReasonFile(admin); ok {
			base = r.Base
		}
	}
	return base, links
}

func parseLockReasonFile(admin string) (lockReason, bool) {
	reason, locked, err := readLock(admin)
	if err != nil || !locked {
		return lockReason{}, false
	}
	return parseLockReason(reason)
}

// writeMeta records one of Cohort's files in a worktree's admin dir. The
// agent working in the worktree may write that dir (git keeps the
// worktree's HEAD and index there), so it may have put a link where the
// file goes: the file is written beside it and renamed over the name,
// which replaces a link instead of following it (a plain write would
// write wherever the agent pointed, with Cohort's rights and no sandbox).
func writeMeta(admin, name, content string) error {
	if fi, err := os.Lstat(admin); err != nil || !fi.IsDir() {
		return fmt.Errorf("worktree: record %s: %s is not a directory", name, admin)
	}
	if err := atomicfile.Write(filepath.Join(admin, name), []byte(content), 0o644); err != nil {
		return fmt.Errorf("worktree: record %s: %w", name, err)
	}
	return nil
}

// lock takes git's worktree lock for owner. A worktree locked by someone
// else yields ErrInUse.
func (m *Manager) lock(ctx context.Context, wt *Worktree, owner Owner) error {
	reason := lockReason{PID: m.pid, Session: owner.SessionID, Agent: owner.AgentID, Host: m.host, Base: wt.BaseCommit}
	_, err := m.worktreeCmd(ctx, "lock", "--reason", reason.String(), wt.Path)
	var ge *GitError
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "already locked") {
		return fmt.Errorf("%w: %s (%s)", ErrInUse, wt.Path, strings.TrimSpace(ge.Stderr))
	}
	return err
}

// unlock releases the worktree lock; an unlocked worktree is not an error.
// With the administrative directory known it deletes its "locked" file,
// which is all `git worktree unlock` does (gitrepository-layout(5)), and
// saves starting a git process.
func (m *Manager) unlock(ctx context.Context, wt *Worktree) error {
	if wt.admin == "" {
		_, err := m.worktreeCmd(ctx, "unlock", wt.Path)
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not locked") {
			return nil
		}
		return err
	}
	if err := os.Remove(filepath.Join(wt.admin, "locked")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("worktree: unlock %s: %w", wt.Path, err)
	}
	return nil
}

// ownerAlive reports whether the process that took a Cohort lock may still
// run. A lock from another host cannot be checked and counts as alive.
func (m *Manager) ownerAlive(r lockReason) bool {
	if r.Host != m.host {
		return true
	}
	return r.PID == m.pid || m.cfg.Alive(r.PID)
}
