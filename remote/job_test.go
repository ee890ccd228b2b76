package remote

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const testCommit = "0123456789abcdef0123456789abcdef01234567"

func testJob() *Job {
	return &Job{ID: "r1a2b3c4d", Description: "fix the bug", Prompt: "Fix it.",
		Definition: Definition{Name: "general-purpose"}, Bundle: "sha256-" + strings.Repeat("ab", 32), BaseCommit: testCommit}
}

func TestDecodeJobIsStrict(t *testing.T) {
	t.Parallel()
	good := mustJSON(func() *Job { j := testJob(); j.Lead = "alice"; return j }())
	if _, err := DecodeJob(good); err != nil {
		t.Fatalf("a good job: %v", err)
	}
	goodKey := base64.StdEncoding.EncodeToString(make([]byte, ed25519.PublicKeySize))
	mate := mustJSON(func() *Job {
		j := testJob()
		j.Lead, j.Teammate = "alice", &Teammate{Team: "t", Member: "carl", NATS: "nats://h:4222", LeadKey: goodKey, JoinSecret: "c2VjcmV0IHNlY3JldCBzZWNyZXQ="}
		return j
	}())
	if j, err := DecodeJob(mate); err != nil || j.Teammate == nil || j.Teammate.Member != "carl" {
		t.Fatalf("a good teammate spawn: %+v, %v", j, err)
	}
	withField := func(k string, v any) []byte {
		var m map[string]any
		_ = json.Unmarshal(good, &m)
		m[k] = v
		return mustJSON(m)
	}
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"unknown field (hooks)", `unknown field "hooks"`, withField("hooks", map[string]any{"Stop": "rm -rf /"})},
		{"trailing data", "trailing data", append(append([]byte{}, good...), []byte(` {}`)...)},
		{"no prompt", "no prompt", withField("prompt", "")},
		{"bad id", "job id", withField("id", "../x")},
		{"short commit", "not a full commit id", withField("base_commit", "abc123")},
		{"no code", "carries no code", withField("bundle", "")},
		{"bundle not a digest", "not a sha256- digest", withField("bundle", "/etc/passwd")},
		{"not JSON", "invalid character", []byte("hello")},
		{"teammate with a bad name", "want names", withField("teammate", map[string]any{"team": "t", "member": "../x", "nats": "nats://h:4222", "lead_key": goodKey})},
		{"teammate without a server", "names no NATS server", withField("teammate", map[string]any{"team": "t", "member": "carl", "lead_key": goodKey})},
		{"teammate with a bad lead key", "lead_key", withField("teammate", map[string]any{"team": "t", "member": "carl", "nats": "nats://h:4222", "lead_key": "AAAA"})},
		{"teammate without a join secret", "join_secret", withField("teammate", map[string]any{"team": "t", "member": "carl", "nats": "nats://h:4222", "lead_key": goodKey})},
		{"teammate with an unknown field", `unknown field "hooks"`, withField("teammate", map[string]any{"team": "t", "member": "carl", "nats": "nats://h:4222", "lead_key": goodKey, "hooks": "x"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeJob(tc.data)
			if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeJob = %v, want ErrDecode mentioning %q", err, tc.want)
			}
		})
	}
}

func testSigner(t *testing.T, name string) *Signer {
	t.Helper()
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	if name != "alice" {
		seed := make([]byte, ed25519.SeedSize)
		copy(seed, name)
		key = ed25519.NewKeyFromSeed(seed)
	}
	s, err := NewSigner(name, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeyringOpensOnlyTrustedJobs(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	alice, mallory := testSigner(t, "alice"), testSigner(t, "mallory")
	ring := NewKeyring()
	if err := ring.Add("alice", alice.key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	sealed, err := alice.Seal(testJob(), now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := ring.Open(sealed, now.Add(time.Minute))
	if err != nil {
		t.Fatalf("Open(a job alice signed) = %v", err)
	}
	if j.Lead != "alice" || j.Prompt != "Fix it." {
		t.Fatalf("opened job = %+v", j)
	}

	var env Envelope
	_ = json.Unmarshal(sealed, &env)
	unsigned := mustJSON(Envelope{Payload: env.Payload})
	tampered := func() []byte {
		e := env
		e.Payload = []byte(strings.Replace(string(env.Payload), "Fix it.", "Exfiltrate it.", 1))
		return mustJSON(e)
	}()
	foreign, _ := mallory.Seal(testJob(), now)
	// mallory's job, relabelled as alice's key: the signature fails.
	relabelled := func() []byte {
		var e Envelope
		_ = json.Unmarshal(foreign, &e)
		e.Key = "alice"
		return mustJSON(e)
	}()
	// alice signs a payload that claims to be bob's.
	misbound := func() []byte {
		j := testJob()
		j.Lead, j.Issued = "bob", now
		p := mustJSON(j)
		return mustJSON(Envelope{Key: "alice", Payload: p, Signature: ed25519.Sign(alice.key, append([]byte(signContext), p...))})
	}()
	old, _ := alice.Seal(testJob(), now.Add(-48*time.Hour))

	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"unsigned", "not signed", unsigned},
		{"unknown key", `key "mallory", which this worker does not trust`, foreign},
		{"altered payload", "does not verify", tampered},
		{"signed by another key", "does not verify", relabelled},
		{"bound to another lead", `names lead "bob" but is signed by "alice"`, misbound},
		{"too old", "longer than this worker's limit", old},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := ring.Open(tc.data, now.Add(time.Minute))
			var ref *Refusal
			if !errors.As(err, &ref) || !strings.Contains(ref.Reason, tc.want) {
				t.Fatalf("Open = %v, want a refusal mentioning %q", err, tc.want)
			}
			if j == nil || j.ID != testJob().ID {
				t.Fatalf("the refusal should still name the job id (for its result), got %+v", j)
			}
		})
	}
	if _, err := ring.Open([]byte(`{"nope":1}`), now); !errors.Is(err, ErrDecode) {
		t.Fatalf("Open(not an envelope) = %v, want ErrDecode", err)
	}
}

func TestReadKeyringNamesTheBadLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := testSigner(t, "alice").PublicKey()
	path := dir + "/trust"
	writeFile(t, path, "# leads\n"+good+"\nbob not-base64!\n")
	if _, err := ReadKeyring(path); err == nil || !strings.Contains(err.Error(), path+":3") {
		t.Fatalf("ReadKeyring = %v, want an error at line 3", err)
	}
	writeFile(t, path, good+"\n")
	k, err := ReadKeyring(path)
	if err != nil || k.Len() != 1 {
		t.Fatalf("ReadKeyring = %v, %v", k, err)
	}
}

func TestLoadOrCreateKeyKeepsTheKey(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/keys/lead.key"
	k1, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]byte(k1), []byte(k2)); diff != "" {
		t.Fatalf("the second load made a new key: %s", diff)
	}
}
