package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lead's trusted_workers file: missing or empty is an error naming
// the file; a worker added while the lead runs is trusted at its first
// result, without a restart.
func TestTrustFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "trusted_workers")
	if _, err := NewTrustFile(path); err == nil || !strings.Contains(err.Error(), "trusted workers") {
		t.Fatalf("missing file: %v", err)
	}
	writeFile(t, path, "# none yet\n")
	if _, err := NewTrustFile(path); err == nil || !strings.Contains(err.Error(), "trusts no worker") {
		t.Fatalf("empty file: %v", err)
	}
	w1, w2 := testSigner(t, "w1"), testSigner(t, "w2")
	writeFile(t, path, w1.PublicKey()+"\n")
	tf, err := NewTrustFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tf.Key("w2"); ok {
		t.Fatal("w2 trusted before it is in the file")
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(w2.PublicKey() + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := Result{JobID: "j", Status: StatusCompleted, Signature: []byte("job sig")}
	if got, err := OpenResult(tf, w2.SealResult(&res), "j", []byte("job sig")); err != nil || got.Worker != "w2" {
		t.Fatalf("w2's result after it was added: %+v, %v", got, err)
	}
	if _, err := OpenResult(tf, testSigner(t, "w3").SealResult(&res), "j", []byte("job sig")); err == nil || !strings.Contains(err.Error(), "does not trust") {
		t.Fatalf("w3's result: %v", err)
	}
}

// TestTrustFileNotRegularOrTooBig: a trust file that is a link to a
// device, or over the size limit, is an error naming it (keyattack4 T3:
// a read without end must not hang a lead's or worker's start).
func TestTrustFileNotRegularOrTooBig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dev := filepath.Join(dir, "dev")
	if err := os.Symlink("/dev/zero", dev); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	writeFile(t, big, strings.Repeat("# padding\n", maxTrustFile/10+1))
	for _, path := range []string{dev, big} {
		if _, err := ReadKeyring(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadKeyring(%s) = %v, want an error naming it", path, err)
		}
	}
}
