//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The launcher and Cohort talk over a SOCK_SEQPACKET socket pair: one JSON
// message a packet, with file descriptors attached (SCM_RIGHTS). A body
// larger than maxInline travels in a memfd attached as the last file.

// message is every packet of the protocol; Op says which fields matter.
type message struct {
	Op string `json:"op"` // policy, spawn (to the launcher); reply, exit (from it)
	ID uint64 `json:"id,omitempty"`

	// policy
	Policy *Policy `json:"policy,omitempty"`
	// spawn
	PolicyID   uint64   `json:"policyId,omitempty"`
	Path       string   `json:"path,omitempty"`
	Args       []string `json:"args,omitempty"`
	Env        []string `json:"env,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	NewSession bool     `json:"newSession,omitempty"`
	// reply
	Err    string  `json:"err,omitempty"`
	Report *Report `json:"report,omitempty"`
	// reply to spawn, and exit
	Pid    int `json:"pid,omitempty"`
	Status int `json:"status,omitempty"`
	// Memfd: the body is in the last attached file.
	Memfd bool `json:"memfd,omitempty"`
}

const (
	maxInline = 48 << 10
	maxPacket = 64 << 10
	maxFiles  = 8
)

// send writes m with files attached.
func send(fd int, m *message, files ...int) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(body) > maxInline {
		mfd, err := unix.MemfdCreate("cohort-sandbox-msg", unix.MFD_CLOEXEC)
		if err != nil {
			return fmt.Errorf("memfd: %w", err)
		}
		defer unix.Close(mfd)
		if err := writeAll(mfd, body); err != nil {
			return err
		}
		files = append(files, mfd)
		body, _ = json.Marshal(&message{Op: m.Op, ID: m.ID, Memfd: true})
	}
	var oob []byte
	if len(files) > 0 {
		oob = unix.UnixRights(files...)
	}
	for {
		err = unix.Sendmsg(fd, body, oob, nil, 0)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
		b = b[n:]
	}
	return nil
}

// recv reads one message and the files attached to it (the caller owns
// them). io.EOF-like: it returns errClosed when the peer has gone.
func recv(fd int, buf, oob []byte) (*message, []*os.File, error) {
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if n == 0 && oobn == 0 {
		return nil, nil, errClosed
	}
	var files []*os.File
	if oobn > 0 {
		scms, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, nil, err
		}
		for _, scm := range scms {
			fds, err := unix.ParseUnixRights(&scm)
			if err != nil {
				continue
			}
			for _, f := range fds {
				files = append(files, os.NewFile(uintptr(f), "sandbox-fd"))
			}
		}
	}
	m := &message{}
	if err := json.Unmarshal(buf[:n], m); err != nil {
		closeFiles(files)
		return nil, nil, fmt.Errorf("sandbox protocol: %w", err)
	}
	if m.Memfd {
		if len(files) == 0 {
			return nil, nil, errors.New("sandbox protocol: memfd body without a file")
		}
		last := files[len(files)-1]
		files = files[:len(files)-1]
		data, err := readAllAt(last)
		last.Close()
		if err != nil {
			closeFiles(files)
			return nil, nil, err
		}
		m = &message{}
		if err := json.Unmarshal(data, m); err != nil {
			closeFiles(files)
			return nil, nil, fmt.Errorf("sandbox protocol: %w", err)
		}
	}
	return m, files, nil
}

func readAllAt(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	_, err = f.ReadAt(data, 0)
	return data, err
}

var errClosed = errors.New("sandbox launcher connection closed")

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
