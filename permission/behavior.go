package permission

import "fmt"

// Behavior is what a rule or a decision says about a call.
type Behavior string

// The behaviours, in evaluation order.
const (
	Deny  Behavior = "deny"
	Ask   Behavior = "ask"
	Allow Behavior = "allow"
)

// ParseBehavior parses "allow", "ask" or "deny".
func ParseBehavior(s string) (Behavior, error) {
	switch Behavior(s) {
	case Allow, Ask, Deny:
		return Behavior(s), nil
	}
	return "", fmt.Errorf("unknown permission behavior %q; want allow, ask or deny", s)
}
