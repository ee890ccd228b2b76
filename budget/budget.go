package budget

import (
	"fmt"
	"math"
	"strconv"
)

// Spend is an amount spent, or expected to be: tokens (input, cache reads
// and writes, and output) and their price in US dollars.
type Spend struct {
	Tokens int64   `json:"tokens,omitempty"`
	USD    float64 `json:"usd,omitempty"`
}

// Add returns s plus t.
func (s Spend) Add(t Spend) Spend { return Spend{Tokens: s.Tokens + t.Tokens, USD: s.USD + t.USD} }

// Sub returns s minus t.
func (s Spend) Sub(t Spend) Spend { return Spend{Tokens: s.Tokens - t.Tokens, USD: s.USD - t.USD} }

// Caps are the limits of one account; a zero field is no limit.
type Caps struct {
	USD    float64 `json:"usd,omitempty"`
	Tokens int64   `json:"tokens,omitempty"`
	// Label names the cap for people, saying whose it is and where it was
	// set: "the session's budget", `agent "reviewer"'s maxBudgetUsd
	// (.cohort/agents/reviewer.md)`.
	Label string `json:"label,omitempty"`
}

// None reports whether c limits nothing.
func (c Caps) None() bool { return c.USD <= 0 && c.Tokens <= 0 }

// Clamp returns c with each of its limits lowered to above's where above's
// is lower, and whether it lowered any. A limit c does not set stays
// unset: the account above holds it.
func (c Caps) Clamp(above Caps) (Caps, bool) {
	lowered := false
	if above.USD > 0 && c.USD > above.USD {
		c.USD, lowered = above.USD, true
	}
	if above.Tokens > 0 && c.Tokens > above.Tokens {
		c.Tokens, lowered = above.Tokens, true
	}
	return c, lowered
}

// Reached is the error of a request that would take an account past its
// cap: nothing was sent. Its text says which cap, its limit, what was
// spent against it and what the request was expected to add.
type Reached struct {
	// Label is the cap's Caps.Label.
	Label string
	// Tokens is set when the cap counts tokens; Limit, Spent and Next are
	// then token counts, else US dollars. Spent includes what requests
	// under way hold.
	Tokens             bool
	Limit, Spent, Next float64
}

func (r *Reached) Error() string {
	return fmt.Sprintf("%s of %s is reached: %s spent, and the next request would add about %s",
		r.Label, r.amount(r.Limit), r.amount(r.Spent), r.amount(r.Next))
}

func (r *Reached) amount(v float64) string {
	if r.Tokens {
		return strconv.FormatInt(int64(math.Round(v)), 10) + " tokens"
	}
	return USD(v)
}

// USD formats dollars as the caps' messages do: four decimals below a
// dollar, two above.
func USD(v float64) string {
	if math.Abs(v) < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// epsilon absorbs the rounding of summed dollar amounts.
const epsilon = 1e-12

// check returns the cap of caps that used plus next would cross, if any.
func check(caps Caps, used, next Spend) *Reached {
	if caps.USD > 0 && next.USD > 0 && used.USD+next.USD > caps.USD+epsilon {
		return &Reached{Label: caps.Label, Limit: caps.USD, Spent: used.USD, Next: next.USD}
	}
	if caps.Tokens > 0 && next.Tokens > 0 && used.Tokens+next.Tokens > caps.Tokens {
		return &Reached{Label: caps.Label, Tokens: true, Limit: float64(caps.Tokens), Spent: float64(used.Tokens), Next: float64(next.Tokens)}
	}
	return nil
}

// ValidUSD reports whether v can be a dollar cap: a finite number above 0.
func ValidUSD(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
