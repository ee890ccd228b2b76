package remote

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Envelope is a signed job as it travels on the stream: the job's JSON
// exactly as signed, the name of the key that signed it, and an ed25519
// signature over a context string and the payload.
type Envelope struct {
	Key       string `json:"key"`
	Payload   []byte `json:"payload"`
	Signature []byte `json:"signature"`
}

// signContext is signed with every payload, so a signature made for
// something else with the same key cannot pass for a job.
const signContext = "cohort remote job v1\n"

var keyNamePattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Signer signs a lead's jobs with its private key. Safe for concurrent use.
type Signer struct {
	name string
	key  ed25519.PrivateKey
}

// NewSigner returns a signer that signs as name.
func NewSigner(name string, key ed25519.PrivateKey) (*Signer, error) {
	if !keyNamePattern.MatchString(name) {
		return nil, fmt.Errorf("key name %q: want 1-64 of letters, digits, '.', '_' and '-'", name)
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("key %q is not an ed25519 private key", name)
	}
	return &Signer{name: name, key: key}, nil
}

// Name is the key's name, the lead's identity on the workers.
func (s *Signer) Name() string { return s.name }

// PublicKey is the line a worker's trust file needs for this lead:
// "name base64-public-key".
func (s *Signer) PublicKey() string {
	return s.name + " " + base64.StdEncoding.EncodeToString(s.key.Public().(ed25519.PublicKey))
}

// Seal binds j to the signer (its Lead and Issued) and signs it.
func (s *Signer) Seal(j *Job, now time.Time) ([]byte, error) {
	j.Lead, j.Issued = s.name, now.UTC()
	payload, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	if len(payload) > MaxJobBytes {
		return nil, fmt.Errorf("job %s is %d bytes, over the %d-byte limit: shorten the prompt", j.ID, len(payload), MaxJobBytes)
	}
	sig := ed25519.Sign(s.key, append([]byte(signContext), payload...))
	return json.Marshal(Envelope{Key: s.name, Payload: payload, Signature: sig})
}

// Refusal is a job a worker will not run: unsigned, signed by a key it
// does not trust, bound to another lead, too old. It is reported as the
// job's result, never redelivered.
type Refusal struct {
	Reason string
	// Unverified is set when the signature could not be checked or did
	// not verify: the job's id is then only what the message claims, and
	// the refusal must not be stored as that job's result (anyone could
	// claim any id). See Worker.refuseUnverified.
	Unverified bool
}

func (r *Refusal) Error() string { return r.Reason }

// Keyring holds the public keys of the leads whose jobs a worker runs, or
// of the workers whose results a lead takes. Safe for concurrent use.
type Keyring struct {
	mu   sync.RWMutex
	keys map[string]ed25519.PublicKey
	// MaxAge refuses jobs issued longer ago than this (default 24h).
	MaxAge time.Duration
}

// NewKeyring returns an empty keyring: it opens no job until Add.
func NewKeyring() *Keyring { return &Keyring{keys: map[string]ed25519.PublicKey{}} }

// Add trusts jobs that name signs with pub.
func (k *Keyring) Add(name string, pub ed25519.PublicKey) error {
	if !keyNamePattern.MatchString(name) {
		return fmt.Errorf("key name %q: want 1-64 of letters, digits, '.', '_' and '-'", name)
	}
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("key %q: not an ed25519 public key (%d bytes)", name, len(pub))
	}
	k.mu.Lock()
	k.keys[name] = pub
	k.mu.Unlock()
	return nil
}

// Len is the number of trusted keys.
func (k *Keyring) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.keys)
}

// Key returns the key trusted under name.
func (k *Keyring) Key(name string) (ed25519.PublicKey, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	pub, ok := k.keys[name]
	return pub, ok
}

// ReadKeyring reads a trust file: one "name base64-public-key" a line
// (what `cohort worker key` prints on the lead's machine); blank lines and
// lines starting with # are skipped. Errors name the file and line: a
// name given twice is one (which key is meant cannot be told), and so is
// a line over maxTrustLine bytes.
func ReadKeyring(path string) (*Keyring, error) {
	data, err := readTrustFile(path)
	if err != nil {
		return nil, err
	}
	k := NewKeyring()
	first := map[string]int{} // name -> the line that named it
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		if len(raw) > maxTrustLine {
			return nil, fmt.Errorf("%s:%d: the line is %d bytes, over the %d-byte limit: a line is \"name base64-public-key\"", path, n, len(raw), maxTrustLine)
		}
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"name base64-public-key\", got %q", path, n, line)
		}
		if prev, ok := first[f[0]]; ok {
			return nil, fmt.Errorf("%s:%d: %q is named again (first at line %d): keep one line for it", path, n, f[0], prev)
		}
		first[f[0]] = n
		pub, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: key of %q is not base64: %v", path, n, f[0], err)
		}
		if err := k.Add(f[0], pub); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
	}
	return k, nil
}

// maxTrustLine bounds a trust file's line (a key line is under 200 bytes).
const maxTrustLine = 64 << 10

// maxTrustFile bounds a trust file (some 5,000 key lines).
const maxTrustFile = 1 << 20

// readTrustFile reads a trust file that must be a regular file of at
// most maxTrustFile bytes. It is opened without blocking and checked on
// the open descriptor, so a named pipe, a device (a link to /dev/zero)
// or a file swapped in between the check and the read is an error
// naming it, never a start that hangs or reads without end.
func readTrustFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("trust file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("trust file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("trust file %s is not a regular file (%s): make it a plain text file of key lines", path, fi.Mode().Type())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTrustFile+1))
	if err != nil {
		return nil, fmt.Errorf("trust file: %w", err)
	}
	if len(data) > maxTrustFile {
		return nil, fmt.Errorf("trust file %s is over the %d-byte limit: a key line is under 200 bytes", path, maxTrustFile)
	}
	return data, nil
}

// Open checks an envelope and decodes its job. A job that is unsigned,
// signed by an unknown key, badly signed, bound to another lead or too old
// is a *Refusal; a signed payload that is not a job wraps ErrDecode. The
// job id is returned whenever it can be read, so that the refusal can be
// reported as the job's result.
func (k *Keyring) Open(data []byte, now time.Time) (*Job, error) {
	var env Envelope
	if err := decodeStrict(data, &env); err != nil {
		return nil, fmt.Errorf("%w: the message is not a signed job envelope: %v", ErrDecode, err)
	}
	if env.Key == "" || len(env.Signature) == 0 {
		return peekID(env.Payload), &Refusal{Reason: "the job is not signed; this worker runs only jobs signed by a lead it trusts", Unverified: true}
	}
	pub, ok := k.Key(env.Key)
	if !ok {
		return peekID(env.Payload), &Refusal{Reason: fmt.Sprintf("the job is signed by key %q, which this worker does not trust (add it to the worker's trust file)", env.Key), Unverified: true}
	}
	if !ed25519.Verify(pub, append([]byte(signContext), env.Payload...), env.Signature) {
		return peekID(env.Payload), &Refusal{Reason: fmt.Sprintf("the job's signature does not verify with key %q: it was altered or signed with another key", env.Key), Unverified: true}
	}
	j, err := DecodeJob(env.Payload)
	if err != nil {
		return peekID(env.Payload), err
	}
	if j.Lead != env.Key {
		return j, &Refusal{Reason: fmt.Sprintf("the job names lead %q but is signed by %q", j.Lead, env.Key)}
	}
	maxAge := k.MaxAge
	if maxAge == 0 {
		maxAge = 24 * time.Hour
	}
	if age := now.Sub(j.Issued); age > maxAge {
		return j, &Refusal{Reason: fmt.Sprintf("the job was issued %s ago, longer than this worker's limit of %s", age.Round(time.Second), maxAge)}
	}
	return j, nil
}

// peekID reads the id of an unverified payload, for the refusal's result
// subject. It is never trusted for anything else.
func peekID(payload []byte) *Job {
	var j struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(payload, &j) != nil || !jobIDPattern.MatchString(j.ID) {
		return nil
	}
	return &Job{ID: j.ID}
}

// LoadOrCreateKey reads the lead's private key from path (base64 of the
// ed25519 seed), creating it with mode 0600 when it does not exist.
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("lead key %s: not a base64 ed25519 seed; remove it to make a new key", path)
		}
		return ed25519.NewKeyFromSeed(seed), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lead key: %w", err)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lead key: %w", err)
	}
	// Written beside the target and linked into place, so a process that
	// races this one reads either no key or a whole one.
	f, err := os.CreateTemp(filepath.Dir(path), ".lead-key-*")
	if err != nil {
		return nil, fmt.Errorf("lead key: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key.Seed()) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Link(f.Name(), path)
	}
	switch {
	case errors.Is(werr, os.ErrExist):
		return LoadOrCreateKey(path)
	case werr != nil:
		return nil, fmt.Errorf("lead key %s: %w", path, werr)
	}
	return key, nil
}
