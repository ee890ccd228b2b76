package team

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/cohort-dev/cohort/mailbox"
)

// A signed JSON value: what the lead and the members sign of the team's
// state on NATS (the lead's terms, member key grants, tasks, statuses).
// The signature covers a context string naming what the value is, then
// the value's JSON with its signature field empty; callers pass v with
// that field cleared.

// signValue signs v under context with key (base64 signature).
func signValue(context string, v any, key ed25519.PrivateKey) string {
	return b64(ed25519.Sign(key, signedBytes(context, v)))
}

// verifyValue reports whether sig (base64) is pub's signature of v under
// context.
func verifyValue(context string, v any, sig string, pub ed25519.PublicKey) bool {
	raw, err := base64.StdEncoding.DecodeString(sig)
	return err == nil && len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, signedBytes(context, v), raw)
}

func signedBytes(context string, v any) []byte {
	b, _ := json.Marshal(v)
	return append([]byte(context), b...)
}

// reportAt tells the store's problem reporter (on the lead's machine, the
// lead) about the entry key of team's bucket at revision rev, once per
// revision and reason.
func (s *Store) reportAt(team, bucket, key string, rev uint64, reason string) {
	s.mu.Lock()
	id := fmt.Sprintf("%s\x00%s\x00%d\x00%s", team, key, rev, reason)
	if s.reported == nil {
		s.reported = map[string]bool{}
	}
	seen := s.reported[id]
	s.reported[id] = true
	s.mu.Unlock()
	if !seen && s.cfg.Mailbox.OnProblem != nil {
		s.cfg.Mailbox.OnProblem(mailbox.Problem{Agent: LeadName, Path: bucket + "/" + key, Reason: reason})
	}
}
