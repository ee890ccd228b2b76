package remote

import (
	"crypto/ed25519"
	"strings"
	"testing"
)

// TestOpenCancel: a worker stops a job only for a cancellation its lead
// signed for that job (its id and envelope signature); a copy for an
// older job with the id, another trusted lead's, an unsigned or altered
// one is refused with a reason.
func TestOpenCancel(t *testing.T) {
	t.Parallel()
	lead, other := testSigner(t, "alice"), testSigner(t, "bob")
	k := NewKeyring()
	for _, s := range []*Signer{lead, other} {
		if err := k.Add(s.name, s.key.Public().(ed25519.PublicKey)); err != nil {
			t.Fatal(err)
		}
	}
	job, sig := &Job{ID: "j1", Lead: "alice"}, []byte("the job's signature")
	if err := k.OpenCancel(lead.SealCancel("j1", sig), job, sig); err != nil {
		t.Fatalf("the lead's own cancellation refused: %v", err)
	}
	var env Envelope
	if err := decodeStrict(lead.SealCancel("j2", sig), &env); err != nil {
		t.Fatal(err)
	}
	env.Payload = mustJSON(cancelOrder{JobID: "j1", JobSignature: sig}) // j2's signature on j1's order
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"unsigned":      {nil, "not a signed cancellation"},
		"junk":          {[]byte("stop"), "not a signed cancellation"},
		"older job":     {lead.SealCancel("j1", []byte("an older job's signature")), "not for this job"},
		"another job":   {lead.SealCancel("j2", sig), "not for this job"},
		"another lead":  {other.SealCancel("j1", sig), `not by the job's lead "alice"`},
		"altered":       {mustJSON(env), "does not verify"},
		"empty payload": {mustJSON(Envelope{Key: "alice", Signature: []byte("x")}), "does not verify"},
	} {
		if err := k.OpenCancel(c.data, job, sig); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: OpenCancel = %v, want an error with %q", name, err, c.want)
		}
	}
}
