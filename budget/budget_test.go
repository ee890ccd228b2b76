package budget

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func openLedger(t *testing.T, path string) *Ledger {
	t.Helper()
	l, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func reached(t *testing.T, err error) *Reached {
	t.Helper()
	var r *Reached
	if !errors.As(err, &r) {
		t.Fatalf("error %v is not a *Reached", err)
	}
	return r
}

// TestReserveStopsBeforeTheCap: a request is refused when its estimate
// would take an account past its cap, and the refusal says which cap, its
// limit, what was spent and what the request would have added.
func TestReserveStopsBeforeTheCap(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "s.json")} {
		l := openLedger(t, path)
		ctx := t.Context()
		if err := l.SetCaps(ctx, Caps{USD: 0.10, Label: "the session's budget"}, Caps{}); err != nil {
			t.Fatal(err)
		}
		agent := l.Session().Child(Caps{}, Spend{})
		for i := range 3 {
			h, err := agent.Reserve(ctx, Spend{USD: 0.03, Tokens: 100})
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if err := h.Settle(Spend{USD: 0.03, Tokens: 100}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := agent.Reserve(ctx, Spend{USD: 0.02})
		r := reached(t, err)
		if r.Label != "the session's budget" || r.Limit != 0.10 || math.Abs(r.Spent-0.09) > 1e-9 || r.Next != 0.02 || r.Tokens {
			t.Errorf("reached %+v", r)
		}
		want := "the session's budget of $0.1000 is reached: $0.0900 spent, and the next request would add about $0.0200"
		if r.Error() != want {
			t.Errorf("message %q\nwant    %q", r.Error(), want)
		}
		// Something that fits still goes.
		h, err := agent.Reserve(ctx, Spend{USD: 0.01})
		if err != nil {
			t.Fatalf("a request that fits: %v", err)
		}
		_ = h.Settle(Spend{USD: 0.01})
		spent, caps, err := l.Spent(ctx)
		if err != nil || math.Abs(spent.USD-0.10) > 1e-9 || spent.Tokens != 300 || caps.USD != 0.10 {
			t.Errorf("session spent %+v caps %+v (%v)", spent, caps, err)
		}
		if got := agent.Spent(); math.Abs(got.USD-0.10) > 1e-9 {
			t.Errorf("the agent's account spent %+v", got)
		}
	}
}

// TestHoldsKeepConcurrentRequestsUnderTheCap: while one request is under
// way, what it holds counts, so a second that would fit alone is refused;
// once the first settles for less than it held, the second fits.
func TestHoldsKeepConcurrentRequestsUnderTheCap(t *testing.T) {
	l := openLedger(t, filepath.Join(t.TempDir(), "s.json"))
	ctx := t.Context()
	_ = l.SetCaps(ctx, Caps{USD: 1, Label: "cap"}, Caps{})
	a, b := l.Session().Child(Caps{}, Spend{}), l.Session().Child(Caps{}, Spend{})
	ha, err := a.Reserve(ctx, Spend{USD: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Reserve(ctx, Spend{USD: 0.5}); reached(t, err).Spent != 0.7 {
		t.Errorf("spent counted %v, want the 0.7 held", reached(t, err).Spent)
	}
	if err := ha.Settle(Spend{USD: 0.2}); err != nil {
		t.Fatal(err)
	}
	if err := ha.Settle(Spend{USD: 5}); err != nil { // a second settle does nothing
		t.Fatal(err)
	}
	hb, err := b.Reserve(ctx, Spend{USD: 0.5})
	if err != nil {
		t.Fatalf("after the settle: %v", err)
	}
	_ = hb.Settle(Spend{USD: 0.5})
	if s, _, _ := l.Spent(ctx); math.Abs(s.USD-0.7) > 1e-9 {
		t.Errorf("spent %v, want 0.7", s.USD)
	}
	// Many agents at once never take the session past its cap.
	var wg sync.WaitGroup
	for range 8 {
		c := l.Session().Child(Caps{}, Spend{})
		wg.Go(func() {
			for {
				h, err := c.Reserve(ctx, Spend{USD: 0.01})
				if err != nil {
					return
				}
				_ = h.Settle(Spend{USD: 0.01})
			}
		})
	}
	wg.Wait()
	if s, _, _ := l.Spent(ctx); s.USD > 1+1e-9 || s.USD < 0.99-1e-9 {
		t.Errorf("eight agents spent %v against a cap of 1", s.USD)
	}
}

// TestChainsAndTokenCaps: an agent's spend counts against every account
// above it; each cap of the chain applies, the nearest that would be
// crossed is the one reported; a token cap counts tokens.
func TestChainsAndTokenCaps(t *testing.T) {
	l := openLedger(t, "")
	ctx := t.Context()
	_ = l.SetCaps(ctx, Caps{USD: 1, Label: "the session's budget"}, Caps{USD: 0.5, Label: "budget (teamMaxBudgetUsd)"})
	team := l.Team("alpha")
	mate := team.Child(Caps{Tokens: 1000, Label: `agent "alice"'s maxTokens`}, Spend{})
	sub := mate.Child(Caps{}, Spend{})
	h, err := sub.Reserve(ctx, Spend{USD: 0.1, Tokens: 900})
	if err != nil {
		t.Fatal(err)
	}
	_ = h.Settle(Spend{USD: 0.1, Tokens: 900})
	r := reached(t, errOf(sub.Reserve(ctx, Spend{USD: 0.1, Tokens: 200})))
	if !r.Tokens || r.Label != `agent "alice"'s maxTokens` || r.Spent != 900 || !strings.Contains(r.Error(), "1000 tokens") {
		t.Errorf("token cap: %+v %v", r, r)
	}
	other := team.Child(Caps{}, Spend{})
	h, _ = other.Reserve(ctx, Spend{USD: 0.35})
	_ = h.Settle(Spend{USD: 0.35})
	r = reached(t, errOf(other.Reserve(ctx, Spend{USD: 0.1})))
	if r.Label != `team "alpha"'s budget (teamMaxBudgetUsd)` || math.Abs(r.Spent-0.45) > 1e-9 {
		t.Errorf("team cap: %+v", r)
	}
	// Another team has its own.
	beta := l.Team("beta").Child(Caps{}, Spend{})
	if h, err := beta.Reserve(ctx, Spend{USD: 0.4}); err != nil {
		t.Errorf("team beta: %v", err)
	} else {
		_ = h.Settle(Spend{USD: 0.4})
	}
	if left, capped, err := beta.Remaining(ctx); err != nil || !capped || math.Abs(left-0.1) > 1e-9 {
		t.Errorf("remaining %v %v %v, want 0.1 (the team's)", left, capped, err)
	}
	if err := beta.Charge(ctx, Spend{USD: 0.3}); err != nil {
		t.Fatal(err)
	}
	r = reached(t, errOf(l.Session().Child(Caps{}, Spend{}).Reserve(ctx, Spend{USD: 0.2})))
	if r.Label != "the session's budget" || math.Abs(r.Spent-1.15) > 1e-9 {
		t.Errorf("the session's cap after a charge: %+v", r)
	}
	// A free request is never refused by a dollar cap.
	if _, err := beta.Reserve(ctx, Spend{Tokens: 10}); err != nil {
		t.Errorf("a free request: %v", err)
	}
}

func errOf(_ *Hold, err error) error { return err }

// TestSpendPersists: a ledger opened again (a continued session) finds what
// was spent, applies the caps set for the new run, and a fork inherits
// the spend; a damaged file is an error naming it and what to do.
func TestSpendPersists(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	path := filepath.Join(dir, "s.json")
	l := openLedger(t, path)
	_ = l.SetCaps(ctx, Caps{USD: 1, Label: "first"}, Caps{})
	h, _ := l.Session().Child(Caps{}, Spend{}).Reserve(ctx, Spend{USD: 0.6})
	_ = h.Settle(Spend{USD: 0.6})

	again := openLedger(t, path)
	if err := again.SetCaps(ctx, Caps{USD: 0.5, Label: "second"}, Caps{}); err != nil {
		t.Fatal(err)
	}
	r := reached(t, errOf(again.Session().Child(Caps{}, Spend{}).Reserve(ctx, Spend{USD: 0.01})))
	if r.Label != "second" || r.Spent != 0.6 {
		t.Errorf("continued: %+v", r)
	}
	if c := again.Session().Caps(); c.USD != 0.5 {
		t.Errorf("caps %+v", c)
	}
	fork := openLedger(t, filepath.Join(dir, "fork.json"))
	if err := fork.Inherit(ctx, path); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := fork.Spent(ctx); s.USD != 0.6 {
		t.Errorf("the fork starts with %v, want 0.6", s.USD)
	}
	if err := fork.Inherit(ctx, filepath.Join(dir, "missing.json")); err != nil {
		t.Errorf("inheriting from no ledger: %v", err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := again.Session().Child(Caps{}, Spend{}).Reserve(ctx, Spend{USD: 0.01})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("damaged ledger: %v", err)
	}
	var rr *Reached
	if errors.As(err, &rr) {
		t.Errorf("a damaged ledger is not a cap: %v", err)
	}
}

// TestUncappedSpendPersists: without caps the spend waits in memory and
// is written at Close (or once a second), so a continued session that
// sets a cap counts it.
func TestUncappedSpendPersists(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.json")
	l := openLedger(t, path)
	team := l.Team("alpha").Child(Caps{}, Spend{})
	for range 3 {
		h, err := team.Reserve(ctx, Spend{USD: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		_ = h.Settle(Spend{USD: 0.25, Tokens: 10})
	}
	if s := l.Team("alpha").Spent(); s.USD != 0.75 {
		t.Errorf("team spent %+v before Close", s)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again := openLedger(t, path)
	_ = again.SetCaps(ctx, Caps{USD: 1, Label: "cap"}, Caps{})
	if s, _, _ := again.Spent(ctx); s.USD != 0.75 || s.Tokens != 30 {
		t.Errorf("continued with %+v spent, want $0.75 and 30 tokens", s)
	}
	if _, err := again.Session().Child(Caps{}, Spend{}).Reserve(ctx, Spend{USD: 0.3}); err == nil {
		t.Error("the continued session's cap did not count the earlier spend")
	}
}

// TestClamp: a definition's cap above the session's is lowered to it; a
// limit it does not set stays unset.
func TestClamp(t *testing.T) {
	got, lowered := Caps{USD: 5, Tokens: 10}.Clamp(Caps{USD: 1})
	if !lowered || got.USD != 1 || got.Tokens != 10 {
		t.Errorf("clamp %+v %v", got, lowered)
	}
	got, lowered = Caps{Tokens: 10}.Clamp(Caps{USD: 1})
	if lowered || got.USD != 0 {
		t.Errorf("clamp of an unset limit %+v %v", got, lowered)
	}
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if ValidUSD(v) {
			t.Errorf("ValidUSD(%v)", v)
		}
	}
	if !ValidUSD(0.01) {
		t.Error("ValidUSD(0.01)")
	}
}

// BenchmarkReserveSettle is the bookkeeping of one model request against
// the session's ledger file, with a session cap (every request reads and
// writes the file under its lock) and without one (spend is written once
// a second): go test -run XXX -bench ReserveSettle ./budget
func BenchmarkReserveSettle(b *testing.B) {
	for _, capped := range []bool{true, false} {
		name := "uncapped"
		if capped {
			name = "capped"
		}
		b.Run(name, func(b *testing.B) {
			l, err := Open(b.Context(), filepath.Join(b.TempDir(), "s.json"))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if capped {
				_ = l.SetCaps(b.Context(), Caps{USD: 1e9, Label: "cap"}, Caps{})
			}
			acc := l.Session().Child(Caps{}, Spend{})
			for b.Loop() {
				h, err := acc.Reserve(b.Context(), Spend{USD: 0.01, Tokens: 100})
				if err != nil {
					b.Fatal(err)
				}
				if err := h.Settle(Spend{USD: 0.01, Tokens: 100}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
