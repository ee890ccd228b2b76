package ownread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO planted under a configuration name is refused at once, where a
// plain read would block until a writer came.
func TestConfigRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, ".mcp.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	_, err := Config(fifo, 0)
	var refused *Refused
	if !errors.As(err, &refused) || refused.Path != fifo {
		t.Fatalf("Config(FIFO) = %v, want a *Refused naming %s", err, fifo)
	}

	file := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(file, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linked.json")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		if data, err := Config(p, 0); err != nil || string(data) != `{"a":1}` {
			t.Errorf("Config(%s) = %q, %v; want the file's content", p, data, err)
		}
	}
	if data, err := Config(file, 3); err != nil || string(data) != `{"a` {
		t.Errorf("Config with a limit of 3 = %q, %v", data, err)
	}
	if _, err := Config(filepath.Join(dir, "missing.json"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := Config(dir, 0); !errors.Is(err, syscall.EISDIR) {
		t.Errorf("a directory: %v, want EISDIR", err)
	}
	if _, err := Config(filepath.Join(file, "x"), 0); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("below a file: %v, want ENOTDIR", err)
	}
}

// A configuration or instructions file that leads into the kernel's
// pseudo file systems is refused, never read: /proc/self/environ holds
// Cohort's API key. A link elsewhere is still followed.
func TestConfigAndTextRefuseTheKernelsFiles(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "review.md")
	if err := os.Symlink("/proc/self/environ", link); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func(string) ([]byte, error){
		"Config": func(p string) ([]byte, error) { return Config(p, 0) },
		"Text":   func(p string) ([]byte, error) { return Text(p, 1<<20, nil) },
	} {
		data, err := read(link)
		var refused *Refused
		if !errors.As(err, &refused) || len(data) != 0 {
			t.Errorf("%s(link to /proc/self/environ) = %d bytes, %v; want it refused", name, len(data), err)
		}
	}
}

// A sparse file of a gigabyte under a configuration name is refused by
// its size, before any of it is read; so is an instructions file above
// its limit. A file at the limit is read whole.
func TestConfigAndTextRefuseWhatIsTooBig(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, ".mcp.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var refused *Refused
	if data, err := Config(huge, 0); !errors.As(err, &refused) || len(data) != 0 {
		t.Errorf("Config(1 GiB sparse) = %d bytes, %v; want it refused", len(data), err)
	}
	exact := filepath.Join(dir, "x.md")
	if err := os.WriteFile(exact, make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := Text(exact, 100, nil); err != nil || len(data) != 100 {
		t.Errorf("Text at its limit = %d bytes, %v; want all 100", len(data), err)
	}
	if data, err := Text(exact, 99, nil); !errors.As(err, &refused) || len(data) != 0 {
		t.Errorf("Text above its limit = %d bytes, %v; want it refused", len(data), err)
	}
}

// Text refuses a link to a file a Read deny rule covers, judged on what
// was opened: the link's target, not its name.
func TestTextRefusesADeniedTarget(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secrets", "key")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "cmd.md")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	denied := func(p string) bool { return p == secret }
	var refused *Refused
	if data, err := Text(link, 1<<20, denied); !errors.As(err, &refused) || len(data) != 0 {
		t.Errorf("Text(link to a denied file) = %q, %v; want it refused", data, err)
	}
	if data, err := Text(link, 1<<20, nil); err != nil || string(data) != "s3cret" {
		t.Errorf("Text(link) with no deny rule = %q, %v", data, err)
	}
}
