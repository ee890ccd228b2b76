package sdkproto_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/sdkproto"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// host is a test's side of the protocol: it writes stdin lines and reads
// the server's lines.
type host struct {
	t      *testing.T
	dir    string
	home   string // COHORT_HOME
	srv    *fakeapi.Server
	in     *io.PipeWriter
	lines  chan obj
	served chan error
	mu     sync.Mutex
	seen   []obj
}

func newHost(t *testing.T, policy fakeapi.Policy, tune func(*sdkproto.Options)) *host {
	t.Helper()
	dir := t.TempDir()
	home, err := os.MkdirTemp("", "csdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	srv := fakeapi.New(fakeapi.Config{Policy: policy})
	t.Cleanup(srv.Close)
	env := map[string]string{"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "TMPDIR": os.TempDir(),
		"PATH": os.Getenv("PATH"), "COHORT_NOTIFY_COALESCE": "0"}
	opts := sdkproto.Options{Config: cohort.Config{Dir: dir, Home: env["COHORT_HOME"], BaseURL: srv.URL, APIKey: "sk-test",
		Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil }, Stderr: io.Discard}}
	if tune != nil {
		tune(&opts)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	h := &host{t: t, dir: dir, home: env["COHORT_HOME"], srv: srv, in: inW, lines: make(chan obj, 1024), served: make(chan error, 1)}
	go func() {
		h.served <- sdkproto.Serve(ctx, inR, outW, opts)
		outW.Close()
	}()
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m obj
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("the server wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			h.lines <- m
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		for range h.lines {
		}
		cancel()
	})
	return h
}

// send writes one stdin line (a string as it is, anything else as JSON).
func (h *host) send(v any) {
	h.t.Helper()
	line, ok := v.(string)
	if !ok {
		data, err := json.Marshal(v)
		if err != nil {
			h.t.Fatal(err)
		}
		line = string(data)
	}
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) user(text string) {
	h.send(obj{"type": "user", "message": obj{"role": "user", "content": text}, "parent_tool_use_id": nil, "session_id": ""})
}

// await reads lines until one satisfies ok, and returns it.
func (h *host) await(what string, ok func(obj) bool) obj {
	h.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, open := <-h.lines:
			if !open {
				h.t.Fatalf("the server's output ended before %s; it wrote:\n%s", what, dump(h.seen))
			}
			h.mu.Lock()
			h.seen = append(h.seen, m)
			h.mu.Unlock()
			if ok(m) {
				return m
			}
		case <-timeout:
			h.t.Fatalf("no %s within 30 s; the server wrote:\n%s", what, dump(h.seen))
		}
	}
}

// close ends stdin and waits for the server to finish, reading the rest.
func (h *host) close() error {
	h.t.Helper()
	h.in.Close()
	for m := range h.lines {
		h.seen = append(h.seen, m)
	}
	select {
	case err := <-h.served:
		return err
	case <-time.After(30 * time.Second):
		h.t.Fatal("Serve did not return within 30 s of stdin's end")
	}
	return nil
}

func isType(typ, subtype string) func(obj) bool {
	return func(m obj) bool { return m["type"] == typ && (subtype == "" || m["subtype"] == subtype) }
}

func isResponse(id string) func(obj) bool {
	return func(m obj) bool { return m["type"] == "control_response" && str(m, "response", "request_id") == id }
}

func isRequest(subtype string) func(obj) bool {
	return func(m obj) bool {
		req, _ := m["request"].(obj)
		return m["type"] == "control_request" && str(req, "subtype") == subtype
	}
}

func controlRequest(id, subtype string, fields obj) obj {
	req := obj{"subtype": subtype}
	for k, v := range fields {
		req[k] = v
	}
	return obj{"type": "control_request", "request_id": id, "request": req}
}

func filepathStat(dir, name string) (os.FileInfo, error) { return os.Stat(filepath.Join(dir, name)) }
