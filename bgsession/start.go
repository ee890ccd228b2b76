package bgsession

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// StartSpec is a background session to start: the program (the cohort
// binary) with its arguments and environment, in Dir.
type StartSpec struct {
	Exe  string
	Args []string
	Env  []string
	Dir  string
	// Name and Intent go in the record (the name shown, the first prompt),
	// and Flags (the session flags among Args, which respawn starts it
	// again with).
	Name, Intent string
	Flags        []string
	// Base, for a session started again (respawn), is its record: what it
	// says of the session (name, conversation, worktree, cost) is kept.
	Base *Record
}

// Start starts spec detached from this terminal and returns its record
// at once: the process leads a new session and process group (setsid),
// its stdout and stderr go to the record's log, and its stdin is a pipe
// that reaches end of file once the record is written (the session must
// wait for that before it writes the record itself; WaitHandOver).
// This process neither waits for it nor reaps it.
func (g *Registry) Start(id string, spec StartSpec) (Record, error) {
	if err := validID(id); err != nil {
		return Record{}, err
	}
	logPath := g.LogPath(id)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return Record{}, fmt.Errorf("bgsession: log: %w", err)
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return Record{}, err
	}
	defer pr.Close()
	cmd := exec.Command(spec.Exe, spec.Args...)
	cmd.Env, cmd.Dir = spec.Env, spec.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return Record{}, fmt.Errorf("bgsession: start %s: %w", spec.Exe, err)
	}
	now := time.Now().UnixMilli()
	rec := Record{ID: id, Name: spec.Name, Cwd: spec.Dir, Intent: spec.Intent, StartedAt: now, Flags: spec.Flags}
	if spec.Base != nil {
		rec = *spec.Base
	}
	rec.PID, rec.ProcStart, rec.LogPath = cmd.Process.Pid, ProcStart(cmd.Process.Pid), logPath
	rec.Status, rec.State, rec.Detail = StatusBusy, StateWorking, ""
	if err := g.Write(rec); err != nil {
		_ = cmd.Process.Kill()
		pw.Close()
		_, _ = cmd.Process.Wait()
		return Record{}, err
	}
	pw.Close() // the hand-over: the session may write its record now
	_ = cmd.Process.Release()
	return rec, nil
}

// HandOverWait bounds how long a starting session waits for its record.
const HandOverWait = 30 * time.Second

// WaitHandOver is the session's side of Start: it reads stdin to end of
// file (bounded by HandOverWait), after which the record is its to write.
func WaitHandOver(stdin *os.File) error {
	if err := stdin.SetReadDeadline(time.Now().Add(HandOverWait)); err != nil && !errors.Is(err, os.ErrNoDeadline) {
		return err
	}
	buf := make([]byte, 512)
	for {
		_, err := stdin.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("bgsession: the starting process did not hand over the record within %s", HandOverWait)
			}
			return nil // end of file: handed over
		}
	}
}
