package redteam

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// leftovers lists the processes that still refer to root: their working
// directory, arguments or environment name it. Every process an attack's
// session starts does (it runs in the project or a worktree, with TMPDIR
// under $COHORT_HOME, or was given a path under root), so after the
// session none may remain. The caller's own process is left out.
func leftovers(root string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return []string{"cannot list /proc: " + err.Error()}
	}
	self := os.Getpid()
	needle := []byte(root)
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
		if !bytes.Contains(cmdline, needle) && !bytes.Contains(environ, needle) && !within(cwd, root) {
			continue
		}
		if state := procState(dir); state == "Z" {
			continue // exited; its parent has not reaped it yet
		}
		out = append(out, fmt.Sprintf("pid %d (cwd %s): %s", pid, cwd, strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " ")))
	}
	return out
}

// procState is the one-letter state of a process ("R", "S", "Z", …).
func procState(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return ""
	}
	return string(data[i+2 : i+3])
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// encodings are the forms of a marker a leak check looks for: as it is,
// reversed, in hex and in base64 at each of the three alignments (the
// part every encoding of a text holding the marker contains).
func encodings(marker string) []string {
	rev := []byte(marker)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	out := []string{marker, string(rev), hex.EncodeToString([]byte(marker)), strings.ToUpper(hex.EncodeToString([]byte(marker)))}
	for shift := 0; shift < 3; shift++ {
		padded := strings.Repeat("x", shift) + marker
		enc := base64.StdEncoding.EncodeToString([]byte(padded))
		// Drop the characters that mix in the padding or what follows.
		start := (shift*4 + 2) / 3
		end := len(enc) - 4
		if end-start > 12 {
			out = append(out, enc[start+1:end])
		}
	}
	return out
}

// leaks reports which of the markers' encodings text holds, naming what.
func leaks(text []byte, where string, markers map[string]string) []string {
	var out []string
	for name, m := range markers {
		for _, enc := range encodings(m) {
			if bytes.Contains(text, []byte(enc)) {
				out = append(out, fmt.Sprintf("%s reached %s (as %q)", name, where, enc))
				break
			}
		}
	}
	return out
}
