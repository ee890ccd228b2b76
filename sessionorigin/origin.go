// Package sessionorigin tells whether a Cohort session was started by a
// person or by another session, and so whether its messages to the other
// sessions of this machine need a person's approval.
//
// Every session that listens on a socket writes a record beside it,
// $COHORT_HOME/sessions/{sessionId}.origin: its process id, that
// process's start time, and the session that started it, if any (Write).
// A receiver reads the sender's process id from the kernel (the socket's
// peer credentials, package sessionsock) and asks Judge about it.
//
// # Decisions the spec leaves open
//
//   - "Started by the person" means: the sending process is a Cohort
//     session's own process (a live record names its pid and start time),
//     that session was not started from within another session, and no
//     ancestor of the sending process is a session's process now. Anything
//     else is held: a program that is no session (nc, a script the model
//     wrote and ran with Bash), a session a model started with Bash (its
//     record names the session it was started under), and a process still
//     running under a session.
//   - "Started from within another session" is decided by the new session
//     itself, at start, by walking its own parent processes (/proc/PID/stat)
//     until one is a live session's process (Detect). The kernel's parent
//     chain is what a model cannot rewrite, unlike an environment variable;
//     the walk is done at start because a background session is re-parented
//     once its starter exits. A session started in the person's terminal,
//     by the person's tmux, or by a program the person runs (an SDK host)
//     has no session among its ancestors.
//   - The records live in the sessions directory, which only the user can
//     enter (0700) and which the sandbox does not let a model's commands
//     write. Where the sandbox is off, a model's command can write anything
//     the user can, records included: there, what a session says about
//     itself is only as good as the user's trust in its model.
//   - Where /proc cannot be read (not Linux), no sender is known: every
//     message is held.
package sessionorigin

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/internal/atomicfile"
)

// Record is what a session writes about itself.
type Record struct {
	SessionID string `json:"sessionId"`
	PID       int    `json:"pid"`
	ProcStart uint64 `json:"procStart"`
	// StartedBy is the session id of the session under whose process this
	// one was started; empty when none was.
	StartedBy string `json:"startedBy,omitempty"`
}

// suffix ends a record's file name, beside {sessionId}.sock.
const suffix = ".origin"

// Path is the record of session id in the sessions directory dir.
func Path(dir, id string) string { return filepath.Join(dir, id+suffix) }

// Write records that session id runs in this process and was started
// by startedBy (Detect's answer).
func Write(dir, id, startedBy string) error {
	pid := os.Getpid()
	data, err := json.Marshal(Record{SessionID: id, PID: pid, ProcStart: procStart(pid), StartedBy: startedBy})
	if err != nil {
		return err
	}
	return atomicfile.Write(Path(dir, id), data, 0o600)
}

// Remove deletes session id's record.
func Remove(dir, id string) error {
	err := os.Remove(Path(dir, id))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Detect returns the session id of the first live session whose process
// is an ancestor of this one, or "" when none is: what Write records as
// StartedBy.
func Detect(dir string) string {
	live := byPID(dir)
	for pid := os.Getppid(); pid > 1; pid = parent(pid) {
		if r, ok := live[pid]; ok {
			return r.SessionID
		}
	}
	return ""
}

// Verdict is Judge's answer about a sender.
type Verdict struct {
	// Person is true when the sender is a session the person started.
	Person bool
	// Why says what was found, for a log or a prompt.
	Why string
}

// Judge says whether the process pid, which sent a message to a session,
// is a session the person started (see the package doc).
func Judge(dir string, pid int) Verdict {
	if pid <= 0 || procStart(pid) == 0 {
		return Verdict{Why: "the sending process is unknown"}
	}
	live := byPID(dir)
	r, ok := live[pid]
	if !ok {
		return Verdict{Why: fmt.Sprintf("process %d is no Cohort session", pid)}
	}
	if r.StartedBy != "" {
		return Verdict{Why: fmt.Sprintf("session %s was started from within session %s", r.SessionID, r.StartedBy)}
	}
	for p := parent(pid); p > 1; p = parent(p) {
		if a, ok := live[p]; ok {
			return Verdict{Why: fmt.Sprintf("session %s runs under session %s", r.SessionID, a.SessionID)}
		}
	}
	return Verdict{Person: true, Why: fmt.Sprintf("session %s was started by the person", r.SessionID)}
}

// byPID reads the live records of dir by process id: a record whose
// process has ended, or whose pid another process took since, is left
// out; one that cannot be read is skipped.
func byPID(dir string) map[int]Record {
	out := map[int]Record{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), suffix) || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var r Record
		if json.Unmarshal(data, &r) != nil || r.PID <= 0 || r.ProcStart == 0 || procStart(r.PID) != r.ProcStart {
			continue
		}
		if prev, ok := out[r.PID]; ok && prev.StartedBy != "" {
			continue // a process with several sessions keeps the strictest record
		}
		out[r.PID] = r
	}
	return out
}

// stat returns the fields of /proc/PID/stat after the command name (field
// 3 onward), or nil.
func stat(pid int) []string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return nil
	}
	return f
}

// procStart is pid's start time in clock ticks since boot (field 22), 0
// when unknown.
func procStart(pid int) uint64 {
	f := stat(pid)
	if f == nil {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// parent is pid's parent process id (field 4), 0 when unknown.
func parent(pid int) int {
	f := stat(pid)
	if f == nil {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
