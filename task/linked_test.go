package task

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// transcriptFile writes a transcript with lines and returns its path. It
// lives under the registry's home, so on the same file system as the
// tasks directory.
func transcriptFile(t *testing.T, r *Registry, lines ...string) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(r.Dir()), "agent.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// An agent task's output file is its transcript, not a copy of it: the same
// file, 0600, growing as the transcript grows; lines written through the
// Output stay in memory and come after the file's in Tail.
func TestOutputLinksToTheTranscript(t *testing.T) {
	r, _ := newReg(t, nil)
	transcript := transcriptFile(t, r, `{"type":"user"}`)
	release := make(chan struct{})
	tk, err := r.Start(context.Background(), Spec{Kind: KindLocalAgent, Description: "linked agent", Transcript: transcript}, block(release, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	out := tk.Output()
	if !out.Linked() {
		t.Fatal("output is not linked to the transcript")
	}
	got, err := os.Lstat(out.Path())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.Stat(transcript)
	if !os.SameFile(got, want) || got.Mode().Perm() != 0o600 || !got.Mode().IsRegular() {
		t.Fatalf("output %s: mode %v, same file as the transcript %v", out.Path(), got.Mode(), os.SameFile(got, want))
	}
	f, err := os.OpenFile(transcript, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"assistant"}` + "\n")
	f.Close()
	if err := out.WriteLine("a note"); err != nil {
		t.Fatal(err)
	}
	if tail := out.Tail(0); strings.Join(tail, "|") != `{"type":"user"}|{"type":"assistant"}|a note` {
		t.Fatalf("tail = %q", tail)
	}
	if tail := out.Tail(1); len(tail) != 1 || tail[0] != "a note" {
		t.Fatalf("tail(1) = %q", tail)
	}
	b, _ := os.ReadFile(out.Path())
	if strings.Contains(string(b), "a note") {
		t.Fatalf("a line written to a linked output reached the transcript:\n%s", b)
	}
	if out.Size() != int64(len(b)) {
		t.Fatalf("size %d, file %d bytes", out.Size(), len(b))
	}
	close(release)
	if _, err := tk.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(transcript); string(b2) != string(b) {
		t.Fatal("finishing the task changed the transcript")
	}
}

// A symbolic link planted where a linked output goes is refused, not
// followed or replaced.
func TestLinkedOutputRefusesSymlink(t *testing.T) {
	r, _ := newReg(t, nil)
	transcript := transcriptFile(t, r, `{"type":"user"}`)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	if err := os.Symlink(victim, filepath.Join(r.Dir(), "aplanted.output")); err != nil {
		t.Fatal(err)
	}
	_, err := r.Start(context.Background(), Spec{ID: "aplanted", Kind: KindLocalAgent, Description: "planted", Transcript: transcript}, done("x"))
	if !errors.Is(err, ErrSymlink) {
		t.Fatalf("Start over a planted link = %v, want ErrSymlink", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("victim changed: %q", b)
	}
}

// When the transcript cannot be linked (here it does not exist; in use,
// another file system), the task gets an output file of its own.
func TestLinkedOutputFallsBackToAFileOfItsOwn(t *testing.T) {
	r, _ := newReg(t, nil)
	tk, err := r.Start(context.Background(), Spec{Kind: KindLocalAgent, Description: "unlinkable",
		Transcript: filepath.Join(t.TempDir(), "missing.jsonl")}, done("x"))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Output().Linked() {
		t.Fatal("output claims to be linked to a missing transcript")
	}
	if err := tk.Output().WriteLine("own line"); err != nil && !errors.Is(err, ErrOutputClosed) {
		t.Fatal(err)
	}
	if _, err := os.Stat(tk.Output().Path()); err != nil {
		t.Fatalf("no output file of its own: %v", err)
	}
}
