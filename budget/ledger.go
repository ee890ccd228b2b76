package budget

import (
	"context"
	"maps"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// settleWait bounds the bookkeeping after a response: it runs whatever the
// caller's context says, since what was spent must be recorded.
const settleWait = lockWait

// Path is where the ledger of session sessionID lives under Cohort's home.
func Path(cohortHome, sessionID string) string {
	return filepath.Join(cohortHome, "spend", sessionID+".json")
}

// flushEvery is how long spend against shared accounts without caps may
// wait in memory before it is written to the file (Close writes the rest).
const flushEvery = time.Second

// Ledger is a session's accounts. Safe for concurrent use; Close it when
// the session ends.
type Ledger struct {
	mu    sync.Mutex
	store *store // nil: the shared accounts live in mem
	mem   state
	seq   int
	root  *Account
	// caps are the shared accounts' caps as last read.
	caps map[string]Caps
	// pending is spend charged to shared accounts that have no caps, not
	// yet in the file; flushed is when it was last written.
	pending map[string]Spend
	flushed time.Time
}

// Open opens the ledger file at path (made on first use), shared with the
// session's other processes, and reads its caps; an empty path keeps the
// ledger in memory (one process, nothing persisted).
func Open(ctx context.Context, path string) (*Ledger, error) {
	l := &Ledger{pending: map[string]Spend{}, flushed: time.Now()}
	if path != "" {
		s, err := newStore(path)
		if err != nil {
			return nil, err
		}
		l.store = s
	}
	l.root = &Account{l: l, key: sessionKey}
	if err := l.update(ctx, func(*state) (bool, error) { return false, nil }); err != nil {
		return nil, err
	}
	return l, nil
}

// Close writes what is still pending. Safe to call more than once.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	return l.update(ctx, func(*state) (bool, error) { return false, nil })
}

// SetCaps records the caps of the session and of every team, for every
// process of the session (the lead calls it when it opens; zero Caps
// remove a cap). The team caps' label completes `team "NAME"'s …`
// ("budget (teamMaxBudgetUsd in FILE)").
func (l *Ledger) SetCaps(ctx context.Context, session, team Caps) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.update(ctx, func(st *state) (bool, error) {
		caps := map[string]Caps{}
		if !session.None() {
			caps[sessionKey] = session
		}
		if !team.None() {
			caps[teamCapsKey] = team
		}
		if maps.Equal(caps, st.Caps) {
			return false, nil
		}
		st.Caps = caps
		return true, nil
	})
}

// Inherit adds what the ledger at from has spent to this one's (a fork of
// a session starts with the spend of the session it forks). A missing
// ledger adds nothing.
func (l *Ledger) Inherit(ctx context.Context, from string) error {
	src, err := newStore(from)
	if err != nil {
		return err
	}
	var spent map[string]Spend
	if err := src.update(ctx, func(st *state) (bool, error) { spent = st.Spent; return false, nil }); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.update(ctx, func(st *state) (bool, error) {
		for k, s := range spent {
			st.charge([]string{k}, s)
		}
		return len(spent) > 0, nil
	})
}

// update runs f on the shared accounts: the file's, under its lock, or
// the memory's. l.mu is held.
func (l *Ledger) update(ctx context.Context, f func(st *state) (bool, error)) error {
	g := func(st *state) (bool, error) {
		flushed := len(l.pending) > 0
		for k, s := range l.pending {
			st.charge([]string{k}, s)
		}
		clear(l.pending)
		l.flushed = time.Now()
		changed, err := f(st)
		changed = changed || flushed
		l.caps = maps.Clone(st.Caps)
		if l.caps == nil {
			l.caps = map[string]Caps{}
		}
		return changed, err
	}
	if l.store == nil {
		_, err := g(&l.mem)
		return err
	}
	return l.store.update(ctx, g)
}

// Session returns the session's account, the root of every chain.
func (l *Ledger) Session() *Account { return l.root }

// Team returns team's account, below the session's (shared by every
// process of the session).
func (l *Ledger) Team(team string) *Account {
	return &Account{l: l, parent: l.root, key: teamPrefix + team}
}

// Spent returns what the session has spent in all (every process of it,
// earlier runs included) and its caps.
func (l *Ledger) Spent(ctx context.Context) (Spend, Caps, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var spent Spend
	var caps Caps
	err := l.update(ctx, func(st *state) (bool, error) {
		spent, caps = st.Spent[sessionKey], st.capsFor(sessionKey)
		return false, nil
	})
	return spent, caps, err
}

// Account is one account of the ledger: the session's, a team's (both
// shared with the session's other processes) or an agent's (in this
// process). Safe for concurrent use.
type Account struct {
	l      *Ledger
	parent *Account
	// key names a shared account in the file; empty for an agent's.
	key string
	// caps, spent and held are an agent's account's (l.mu).
	caps  Caps
	spent Spend
	held  Spend
}

// Child returns a new agent's account below a, with its own caps and
// what the agent spent before (an agent brought back from its
// transcript).
func (a *Account) Child(caps Caps, spent Spend) *Account {
	return &Account{l: a.l, parent: a, caps: caps, spent: spent}
}

// Caps returns the account's own caps: an agent's, or the session's or a
// team's as the ledger holds them.
func (a *Account) Caps() Caps {
	if a.key == "" {
		return a.caps
	}
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	st := state{Caps: l.caps}
	return st.capsFor(a.key)
}

// chain returns a and the accounts above it, split into agents' and the
// shared keys.
func (a *Account) chain() (local []*Account, keys []string) {
	for acc := a; acc != nil; acc = acc.parent {
		if acc.key != "" {
			keys = append(keys, acc.key)
		} else {
			local = append(local, acc)
		}
	}
	return local, keys
}

// Hold is what a request under way holds against its chain. Settle it
// once, when the response has arrived or the request failed.
type Hold struct {
	a    *Account
	id   string
	est  Spend
	keys []string // the shared accounts it holds in the file (none: they have no caps)
	done bool
}

// Reserve holds est, the next request's estimated spend, against a and
// every account above it. It returns a *Reached, and holds nothing, when
// the request would take one of them past its cap; another error when the
// ledger cannot be read or written (nothing may be sent then either).
// Shared accounts without caps are not read: their spend is only written.
func (a *Account) Reserve(ctx context.Context, est Spend) (*Hold, error) {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	local, keys := a.chain()
	for _, acc := range local {
		if r := check(acc.caps, acc.spent.Add(acc.held), est); r != nil {
			return nil, r
		}
	}
	l.seq++
	h := &Hold{a: a, id: strconv.Itoa(l.seq), est: est}
	if l.capped(keys) {
		h.keys = keys
		err := l.update(ctx, func(st *state) (bool, error) {
			for _, k := range keys {
				if r := check(st.capsFor(k), st.used(k), est); r != nil {
					return false, r
				}
			}
			pid, owner := 0, ""
			if l.store != nil {
				pid, owner = l.store.pid, l.store.owner
			}
			st.Holds = append(st.Holds, hold{ID: h.id, PID: pid, Owner: owner, Accounts: keys, Spend: est})
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, acc := range local {
		acc.held = acc.held.Add(est)
	}
	return h, nil
}

// Settle replaces the hold with actual, what the request cost (zero when
// it failed before any usage). A second call does nothing.
func (h *Hold) Settle(actual Spend) error {
	if h == nil {
		return nil
	}
	l := h.a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.done {
		return nil
	}
	h.done = true
	local, keys := h.a.chain()
	for _, acc := range local {
		acc.held = acc.held.Sub(h.est)
		acc.spent = acc.spent.Add(actual)
	}
	if len(h.keys) == 0 {
		return l.chargeLater(keys, actual)
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	return l.update(ctx, func(st *state) (bool, error) {
		st.release(h.id)
		st.charge(keys, actual)
		return true, nil
	})
}

// Charge adds spend that Cohort learns of only afterwards (a remote job's)
// to a and every account above it.
func (a *Account) Charge(ctx context.Context, s Spend) error {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	local, keys := a.chain()
	for _, acc := range local {
		acc.spent = acc.spent.Add(s)
	}
	if !l.capped(keys) {
		return l.chargeLater(keys, s)
	}
	return l.update(ctx, func(st *state) (bool, error) {
		st.charge(keys, s)
		return true, nil
	})
}

// capped reports whether a shared account of keys has a cap: then its
// bookkeeping goes through the file at every request. l.mu is held.
func (l *Ledger) capped(keys []string) bool {
	st := state{Caps: l.caps}
	for _, k := range keys {
		if !st.capsFor(k).None() {
			return true
		}
	}
	return false
}

// chargeLater adds s to what keys have spent, in memory, and writes what
// waits once it has waited flushEvery. l.mu is held.
func (l *Ledger) chargeLater(keys []string, s Spend) error {
	for _, k := range keys {
		l.pending[k] = l.pending[k].Add(s)
	}
	if len(keys) == 0 || time.Since(l.flushed) < flushEvery {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	defer cancel()
	return l.update(ctx, func(*state) (bool, error) { return false, nil })
}

// Remaining returns the dollars a and the accounts above it leave to
// spend — the least any cap of the chain leaves, after what is spent and
// held — and false when no dollar cap applies.
func (a *Account) Remaining(ctx context.Context) (float64, bool, error) {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	local, keys := a.chain()
	left, capped := 0.0, false
	least := func(caps Caps, used Spend) {
		if caps.USD <= 0 {
			return
		}
		if r := max(caps.USD-used.USD, 0); !capped || r < left {
			left, capped = r, true
		}
	}
	for _, acc := range local {
		least(acc.caps, acc.spent.Add(acc.held))
	}
	if len(keys) == 0 {
		return left, capped, nil
	}
	err := l.update(ctx, func(st *state) (bool, error) {
		for _, k := range keys {
			least(st.capsFor(k), st.used(k))
		}
		return false, nil
	})
	return left, capped, err
}

// Spent returns what an agent's account has spent (requests under way not
// included); for a shared account, what the ledger holds.
func (a *Account) Spent() Spend {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.key == "" {
		return a.spent
	}
	var s Spend
	_ = l.update(context.Background(), func(st *state) (bool, error) { s = st.Spent[a.key]; return false, nil })
	return s
}
