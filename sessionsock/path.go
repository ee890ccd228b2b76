package sessionsock

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"golang.org/x/sys/unix"
)

// Sentinel errors callers branch on. Returned errors wrap them with context.
var (
	// ErrInUse: a live session already listens on the path.
	ErrInUse = errors.New("session socket in use")
	// ErrNoSession: nothing listens on the path (no socket, or a stale one).
	ErrNoSession = errors.New("no such session")
	// ErrRefused: the peer answered but did not accept the message (a
	// handler error, an invalid or oversized message, another user).
	ErrRefused = errors.New("message refused")
	// ErrInvalidSessionID: a session id that cannot name a socket file.
	ErrInvalidSessionID = errors.New("invalid session id")
)

// maxPath is the longest path a Unix socket address holds: sun_path less
// its terminating NUL (107 bytes on Linux, 103 on macOS).
var maxPath = len(unix.RawSockaddrUnix{}.Path) - 1

var sessionIDPattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidateSessionID reports whether id may name a session socket: 1 to 128
// ASCII letters, digits, '.', '_' or '-', starting with a letter or digit,
// so it can neither leave the directory nor hide a file.
func ValidateSessionID(id string) error {
	if !sessionIDPattern.MatchString(id) {
		return fmt.Errorf("%w %q: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", ErrInvalidSessionID, clip.String(id, 60))
	}
	return nil
}

// Path returns the socket path of session id in dir
// ($COHORT_HOME/sessions): dir/{id}.sock. It fails for an invalid id and
// for a path too long for a Unix socket address.
func Path(dir, id string) (string, error) {
	if err := ValidateSessionID(id); err != nil {
		return "", err
	}
	if dir == "" {
		return "", errors.New("session socket directory is empty")
	}
	path := filepath.Join(dir, id+".sock")
	if err := checkLen(path); err != nil {
		return "", err
	}
	return path, nil
}

// checkLen refuses paths bind(2) and connect(2) would reject with a less
// helpful EINVAL.
func checkLen(path string) error {
	if len(path) > maxPath {
		return fmt.Errorf("session socket path %s is %d bytes, but a Unix socket path holds at most %d: set COHORT_HOME to a shorter directory", path, len(path), maxPath)
	}
	return nil
}
