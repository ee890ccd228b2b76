package bgsession

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ProbeTimeout bounds the connect that tells whether a session's socket
// answers.
const ProbeTimeout = 300 * time.Millisecond

// ProcStart is the start time of process pid in clock ticks since boot
// (/proc/PID/stat field 22), or 0 when it cannot be read (no such process,
// or no /proc).
func ProcStart(pid int) uint64 {
	if pid <= 0 {
		return 0
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// running reports whether rec's process is the one that started the
// session: its pid runs and started when the record says.
func running(rec Record) bool {
	if rec.PID <= 0 {
		return false
	}
	if err := syscall.Kill(rec.PID, 0); err != nil && err != syscall.EPERM {
		return false
	}
	st := ProcStart(rec.PID)
	return st != 0 && (rec.ProcStart == 0 || st == rec.ProcStart)
}

// SocketPath is the session socket of rec ("" before the session knows its
// id).
func (g *Registry) SocketPath(rec Record) string {
	if rec.SessionID == "" {
		return ""
	}
	return filepath.Join(g.Sockets, rec.SessionID+".sock")
}

// answers reports whether a connect to path succeeds within ProbeTimeout.
func answers(ctx context.Context, path string) bool {
	if path == "" {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Check fills rec.Alive: its process runs and (once the session has opened
// its socket) the socket answers. A record whose state says it runs while
// it is not alive gets state StateDead and no status.
func (g *Registry) Check(ctx context.Context, rec Record) Record {
	rec.Alive = running(rec)
	if rec.Alive && rec.SessionID != "" && rec.State != StateFailed {
		rec.Alive = answers(ctx, g.SocketPath(rec))
	}
	if !rec.Alive {
		rec.Status = ""
		if !rec.Ended() {
			rec.State = StateDead
		}
	}
	return rec
}

// Sessions lists the records with their liveness (Check): all of them, or
// only the live ones. Unreadable records come back as errors, by path.
func (g *Registry) Sessions(ctx context.Context, all bool) ([]Record, []error) {
	recs, errs := g.List()
	out := recs[:0]
	for _, r := range recs {
		r = g.Check(ctx, r)
		if all || r.Alive {
			out = append(out, r)
		}
	}
	return out, errs
}
