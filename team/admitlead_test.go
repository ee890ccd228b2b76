package team

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/natstest"
)

// TestAdmitRefusesTheLeadsName: Admit signs no key claimed for the lead's
// name, in any letter case, even when the claim carries a valid proof of
// the spawn's join secret: the refusal is Admit's own, not only
// AddMember's (which decides who may be spawned).
func TestAdmitRefusesTheLeadsName(t *testing.T) {
	srv := natstest.Start(t).URL()
	lead, _, _ := leadMachine(t, srv, make(reporter, 8), "erin")
	a := newAttacker(t, srv)
	_, evil, _ := ed25519.GenerateKey(rand.Reader)
	secret := NewJoinSecret()
	sec, _ := decodeSecret(secret)
	for _, name := range []string{LeadName, strings.ToUpper(LeadName)} {
		putClaim(t, a, name, evil, sec)
		ok, err := lead.Admit(t.Context(), "t", name, secret)
		if ok || err == nil || !strings.Contains(err.Error(), "the lead's name") {
			t.Fatalf("Admit(%q) = %v, %v: want a refusal naming the lead's name", name, ok, err)
		}
		if _, err := a.kv.Get(t.Context(), GrantKey(name)); err == nil {
			t.Fatalf("a key grant for %q was written", name)
		}
	}
	// The same claim for a member is signed: the refusal is the name's.
	putClaim(t, a, "erin", evil, sec)
	if ok, err := lead.Admit(t.Context(), "t", "erin", secret); !ok || err != nil {
		t.Fatalf("Admit(erin) = %v, %v: want it signed", ok, err)
	}
}

// putClaim writes a claim of key for member in team t, proved with the
// join secret sec, as anyone who may write the bucket can.
func putClaim(t *testing.T, a *attacker, member string, key ed25519.PrivateKey, sec []byte) {
	t.Helper()
	c := keyClaim{Team: "t", Member: member, PublicKey: b64(key.Public().(ed25519.PublicKey)), Machine: "m"}
	c.Proof = b64(c.mac(sec))
	claim, _ := json.Marshal(c)
	if _, err := a.kv.Put(t.Context(), ClaimKey(member), claim); err != nil {
		t.Fatal(err)
	}
}
