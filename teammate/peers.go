package teammate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/team"
)

// Peer is another Cohort session of this user on this machine that
// answers on its socket: its name and short id when it is a background
// session (package bgsession's record), its session id, and the socket a
// message reaches it through.
type Peer struct {
	Name, ID, SessionID, Socket string
}

// label is how a peer is shown: its name and ids, then its socket.
func (p Peer) label() string {
	if p.Name == "" {
		return fmt.Sprintf("session %s (uds:%s)", p.SessionID, p.Socket)
	}
	return fmt.Sprintf("%q (id %s, session %s)", p.Name, p.ID, p.SessionID)
}

// peers lists the other sessions (LeadConfig.Peers), bounded by
// listProbe.
func (l *Lead) peers(ctx context.Context) []Peer {
	if l.cfg.Peers == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, listProbe)
	defer cancel()
	ps := l.cfg.Peers(ctx)
	slices.SortFunc(ps, func(a, b Peer) int { return strings.Compare(a.Name+a.SessionID, b.Name+b.SessionID) })
	return ps
}

// findPeer picks the session to names among ps: its name (any case), its
// short id or its session id, exactly. Two sessions of one name are an
// error that lists them; no match is ok false.
func findPeer(ps []Peer, to string) (Peer, bool, error) {
	var hits []Peer
	for _, p := range ps {
		if to == p.ID || to == p.SessionID || (p.Name != "" && strings.EqualFold(to, p.Name)) {
			hits = append(hits, p)
		}
	}
	switch len(hits) {
	case 0:
		return Peer{}, false, nil
	case 1:
		return hits[0], true, nil
	}
	return Peer{}, false, fmt.Errorf("%q names %d sessions on this machine: %s; send to one of them by its id", to, len(hits), peerList(hits))
}

// peerList names ps for an error.
func peerList(ps []Peer) string {
	if len(ps) == 0 {
		return "none"
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.label()
	}
	return strings.Join(out, "; ")
}

// sessionAddress turns a to that names another session of this machine
// (not an agent of this session, not a member of the sender's team) into
// its uds: address. Plain names that name nothing come back unchanged.
func (t *sendTool) sessionAddress(ctx context.Context, teamName, to string) (string, error) {
	if to == "" || to == "*" || to == team.LeadName || strings.HasPrefix(to, "uds:") || strings.HasPrefix(to, "bridge:") {
		return to, nil
	}
	if _, ok := t.rt.Lookup(to); ok {
		return to, nil
	}
	if _, ok := t.rt.LookupName(to, true); ok {
		return to, nil // the bare name of an agent of this session wins
	}
	if teamName != "" {
		if _, err := t.l.cfg.Store.Member(teamName, to); err == nil {
			return to, nil
		}
	}
	p, ok, err := findPeer(t.l.peers(ctx), to)
	if err != nil || !ok {
		return to, err
	}
	return "uds:" + p.Socket, nil
}

// knownSessions ends an error about an address that names nothing: the
// sessions of this machine it could have named.
func (l *Lead) knownSessions(ctx context.Context) string {
	ps := l.peers(ctx)
	if len(ps) == 0 {
		return " No other Cohort session runs on this machine."
	}
	return " Other Cohort sessions on this machine (send to a name or id): " + peerList(ps) + "."
}
