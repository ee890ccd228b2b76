package team

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/remote"
)

// Attacks on member keys from outside (keyattack, session 6): a NATS
// client with the run of the team's subjects and state bucket, sometimes
// holding a key a member once had. Each test asserts the refusal (see
// /work/notes/keyattack-log.md; K1, K2 and T1 escaped until session 7).

// oldKeyOf is the key member had on worker w.
func oldKeyOf(t *testing.T, w *Store, member string) ed25519.PrivateKey {
	t.Helper()
	key, err := remote.LoadOrCreateKey(filepath.Join(w.Root(), "t", KeysDir, member+".key"))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestKeyattackOldKeyRightAfterRespawn: carl is heard by the lead and by
// dana from his first worker; he is respawned on a second worker (the
// lead signs generation 2) and has said nothing yet. Whoever holds the
// first worker's key then sends as carl. The lead signed generation 2 a
// moment ago, dana has never seen it: both must refuse the old key
// (keys are asked for on every message: jsmail.NewFreshKeys).
func TestKeyattackOldKeyRightAfterRespawn(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR, danaR := make(reporter, 8), make(reporter, 8)
	lead, _, leadIn := leadMachine(t, srv, leadR, "carl", "dana")
	w1, carl1 := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	_, dana := workerMachine(t, lead, srv, danaR, "dana")
	danaIn := openInbox(t, dana, "dana")
	heard(t, carl1, leadIn, danaIn, "from the first worker")
	old := oldKeyOf(t, w1, "carl")

	_, carl2 := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	a := newAttacker(t, srv)
	a.forge(t, old, "carl", LeadName, "old key after respawn")
	a.forge(t, old, "carl", "dana", "old key after respawn")
	heard(t, carl2, leadIn, danaIn, "from the second worker")
	leadR.expect(t, "the lead", "signature does not verify")
	danaR.expect(t, "dana", "signature does not verify")
}

// TestKeyattackRolledBackEntryOnAFreshMachine: after carl's respawn
// (generation 2) the attacker, holding carl's first key, puts generation
// 1 back in the bucket. erin, a teammate spawned afterwards on a new
// worker, has never seen carl's generation 2: she must still refuse the
// old key, and take the real carl's (her spawn carried generation 2:
// Store.SpawnGrants, PinGrants).
func TestKeyattackRolledBackEntryOnAFreshMachine(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR, erinR := make(reporter, 8), make(reporter, 8)
	lead, _, leadIn := leadMachine(t, srv, leadR, "carl", "erin")
	w1, _ := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	a := newAttacker(t, srv)
	gen1 := a.entry(t, "carl")
	old := oldKeyOf(t, w1, "carl")
	_, carl2 := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	send(t, carl2, "carl", LeadName, "generation 2")
	if got := receiveOne(t, leadIn); got.Text != "generation 2" {
		t.Fatalf("lead got %+v", got)
	}

	a.put(t, "carl", gen1)
	_, erin := workerMachine(t, lead, srv, erinR, "erin")
	erinIn := openInbox(t, erin, "erin")
	a.forge(t, old, "carl", "erin", "rolled back")
	send(t, carl2, "carl", "erin", "the real carl")
	if got := receiveOne(t, erinIn); got.Text != "the real carl" {
		t.Fatalf("erin got %q from %s: the rolled-back generation 1 key was trusted", got.Text, got.From)
	}
}

// TestKeyattackGrantMovedToAnotherName: a member (carl, whose key the
// attacker holds) copies his own valid, lead-signed entry under dana's
// key and under a name that is no member, and sends as them, and sends a
// shutdown request as the lead signed with his key and as himself. erin,
// who never read dana's key from the bucket (her spawn carried it),
// refuses all of it; the next message she gets
// is dana's real one.
func TestKeyattackGrantMovedToAnotherName(t *testing.T) {
	srv := natstest.Start(t).URL()
	erinR := make(reporter, 16)
	lead, _, _ := leadMachine(t, srv, make(reporter, 8), "carl", "dana", "erin")
	w1, _ := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	_, dana := workerMachine(t, lead, srv, make(reporter, 8), "dana")
	_, erin := workerMachine(t, lead, srv, erinR, "erin")
	erinIn := openInbox(t, erin, "erin")
	carlKey := oldKeyOf(t, w1, "carl")
	a := newAttacker(t, srv)
	carlGrant := a.entry(t, "carl")
	danaGrant := a.entry(t, "dana")

	a.put(t, "dana", carlGrant)
	a.forge(t, carlKey, "dana", "erin", "carl as dana")
	erinR.expect(t, "erin", "dana", GrantKey("dana"), "signed for member \"carl\"")
	erinR.expect(t, "erin", "dana", "signature does not verify") // checked with dana's grant from erin's spawn
	a.put(t, "mallory", carlGrant)
	a.forge(t, carlKey, "mallory", "erin", "carl as mallory")
	erinR.expect(t, "erin", "mallory", "whose key this team does not know")
	a.forge(t, carlKey, LeadName, "erin", "carl as the lead")
	erinR.expect(t, "erin", "signature does not verify")
	a.publish(t, carlKey, mailbox.Message{From: "carl", To: "erin"}, mailbox.ShutdownRequest{RequestID: "r1"})
	erinR.expect(t, "erin", "shutdown_request from \"carl\" refused: only the lead")
	a.publish(t, carlKey, mailbox.Message{From: "carl", To: "erin"}, mailbox.PlanApprovalResponse{RequestID: "r2", Approve: true})
	erinR.expect(t, "erin", "plan_approval_response from \"carl\" refused: only the lead")
	a.publish(t, carlKey, mailbox.Message{From: "carl", To: "erin"}, mailbox.PermissionResponse{RequestID: "r3", Decision: mailbox.DecisionAllow})
	erinR.expect(t, "erin", "permission_response from \"carl\" refused: only the lead")

	a.put(t, "dana", danaGrant)
	send(t, dana, "dana", "erin", "the real dana")
	if got := receiveOne(t, erinIn); got.From != "dana" || got.Text != "the real dana" {
		t.Fatalf("erin got %+v, want dana's own message", got)
	}
}

// TestKeyattackDeletedEntryAndStaleClaim: the attacker deletes carl's
// entry and sends as carl with a key of its own: the lead (which keeps
// carl's grant) and a machine spawned afterwards (whose spawn carried
// it) refuse it. Then it leaves carl's first
// spawn's claim (made with that spawn's secret) in place for a respawn:
// the lead, admitting with the new spawn's secret, does not sign it.
func TestKeyattackDeletedEntryAndStaleClaim(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR, erinR := make(reporter, 8), make(reporter, 8)
	lead, _, leadIn := leadMachine(t, srv, leadR, "carl", "erin")
	_, carl := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	a := newAttacker(t, srv)
	e, err := a.kv.Get(t.Context(), ClaimKey("carl"))
	if err != nil {
		t.Fatal(err)
	}
	staleClaim := e.Value()
	if err := a.kv.Delete(t.Context(), GrantKey("carl")); err != nil {
		t.Fatal(err)
	}
	_, evil, _ := ed25519.GenerateKey(rand.Reader)
	a.forge(t, evil, "carl", LeadName, "entry deleted")
	leadR.expect(t, "the lead", "carl")
	send(t, carl, "carl", LeadName, "still carl")
	if got := receiveOne(t, leadIn); got.Text != "still carl" {
		t.Fatalf("lead got %+v", got)
	}
	// erin's spawn carried carl's grant (SpawnGrants): she checks carl
	// with it, refuses the forger and hears the real carl.
	_, erin := workerMachine(t, lead, srv, erinR, "erin")
	erinIn := openInbox(t, erin, "erin")
	a.forge(t, evil, "carl", "erin", "entry deleted")
	erinR.expect(t, "erin", "carl", "signature does not verify")
	send(t, carl, "carl", "erin", "the real carl")
	if got := receiveOne(t, erinIn); got.Text != "the real carl" {
		t.Fatalf("erin got %+v", got)
	}

	if _, err := a.kv.Put(t.Context(), ClaimKey("carl"), staleClaim); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if ok, err := lead.Admit(ctx, "t", "carl", NewJoinSecret()); ok || err == nil {
		t.Fatalf("the lead signed a claim of an earlier spawn for a new one: %v %v", ok, err)
	}
}

// publish sends a structured message m (From, To set) with payload p,
// signed with key as jsmail signs.
func (a *attacker) publish(t *testing.T, key ed25519.PrivateKey, m mailbox.Message, p mailbox.Payload) {
	t.Helper()
	full, err := mailbox.NewMessage(m.From, m.To, p)
	if err != nil {
		t.Fatal(err)
	}
	full.ID, full.Timestamp = mailbox.NewID(time.Now()), time.Now().UTC().Truncate(time.Millisecond)
	body, err := full.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	a.raw(t, key, m.From, m.To, full.ID, body)
}

// TestKeyattackTeamFileInTheBucketIsTheLeads: the team file on NATS is a
// plain entry of the state bucket. The attacker rewrites it: carl's mode
// becomes bypassPermissions with no plan required, and the whole disk is
// a team-allowed path for Edit and Write. The worker that runs carl reads
// its member (internal/assemble openTeammate: store.Member, whose Mode
// teammate.Loop.build passes to Checker.SetMode) and the team-allowed
// paths (allow rules) from there: both machines read the lead's signed
// terms instead (terms.go), and the worker reports the rewrite. Then the
// attacker signs terms of its own into the entry: refused and reported,
// the terms accepted before still apply. (Escaped as T1 until the terms
// were signed: /work/notes/keyattack-log.md row 18.)
func TestKeyattackTeamFileInTheBucketIsTheLeads(t *testing.T) {
	srv := natstest.Start(t).URL()
	wr := make(reporter, 8)
	lead, _, _ := leadMachine(t, srv, make(reporter, 8), "carl")
	if _, err := lead.Update(t.Context(), "t", func(c *Config) error {
		c.Members[c.memberIndex("carl")].PlanModeRequired = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	w, _ := workerMachine(t, lead, srv, wr, "carl")
	a := newAttacker(t, srv)
	rewrite := func(change func(file map[string]any)) {
		t.Helper()
		e, err := a.kv.Get(t.Context(), ConfigKey)
		if err != nil {
			t.Fatal(err)
		}
		var file map[string]any
		if err := json.Unmarshal(e.Value(), &file); err != nil {
			t.Fatal(err)
		}
		change(file)
		data, _ := json.Marshal(file)
		if _, err := a.kv.Put(t.Context(), ConfigKey, data); err != nil {
			t.Fatal(err)
		}
	}
	widen := func(file map[string]any) {
		for _, m := range file["members"].([]any) {
			if mm := m.(map[string]any); mm["name"] == "carl" {
				mm["mode"], mm["planModeRequired"] = "bypassPermissions", false
			}
		}
		file["teamAllowedPaths"] = []any{
			map[string]any{"path": "/", "toolName": "Edit", "addedBy": LeadName, "addedAt": time.Now().UnixMilli()},
			map[string]any{"path": "/", "toolName": "Write", "addedBy": LeadName, "addedAt": time.Now().UnixMilli()},
		}
	}
	holds := func(when string) {
		t.Helper()
		for name, s := range map[string]*Store{"the worker": w, "the lead's machine": lead} {
			m, err := s.Member("t", "carl")
			if err != nil {
				t.Fatalf("%s, %s: %v", name, when, err)
			}
			if m.Mode == "bypassPermissions" || !m.PlanModeRequired {
				t.Errorf("%s runs carl with mode %q, plan required %v %s: the bucket writer's, not the lead's", name, m.Mode, m.PlanModeRequired, when)
			}
			tm, err := s.Load("t")
			if err != nil {
				t.Fatalf("%s, %s: %v", name, when, err)
			}
			if len(tm.Config.TeamAllowedPaths) > 0 {
				t.Errorf("%s allows the team %+v %s: the bucket writer's paths, not the lead's", name, tm.Config.TeamAllowedPaths, when)
			}
		}
	}
	rewrite(widen)
	holds("after the unsigned fields were rewritten")
	wr.expect(t, "the worker", StateBucket("t"), "differ from what the lead signed")

	_, evil, _ := ed25519.GenerateKey(rand.Reader)
	rewrite(func(file map[string]any) {
		widen(file)
		var terms Terms
		raw, _ := json.Marshal(file[termsField])
		if err := json.Unmarshal(raw, &terms); err != nil {
			t.Fatal(err)
		}
		terms.Seq++
		terms.Members["carl"] = MemberTerms{Mode: "bypassPermissions"}
		terms.Allowed = []termsPath{{Path: "/", ToolName: "Edit"}}
		terms.Signature = signValue(termsContext, terms.unsigned(), evil)
		file[termsField] = terms
	})
	holds("after the terms were forged")
	wr.expect(t, "the worker", StateBucket("t"), "do not verify with the lead's key", "refused")

	// A worker may not change the terms itself either.
	if _, err := w.SetMode(t.Context(), "t", "carl", "bypassPermissions"); err == nil || !strings.Contains(err.Error(), "only the lead's machine") {
		t.Errorf("the worker changed carl's mode in the team file: %v", err)
	}
	// The lead's next change puts its own terms back for every reader.
	if _, err := lead.SetActive(t.Context(), "t", "carl", true); err != nil {
		t.Fatal(err)
	}
	holds("after the lead's next change")
}
