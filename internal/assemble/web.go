package assemble

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool/web"
)

// webConfig ties WebFetch to the permission rules: every redirect hop must
// be allowed without asking, and only a host an allow rule names exactly
// (WebFetch(domain:localhost)) may be at a non-public address.
func (s *Session) webConfig() web.Config {
	return web.Config{
		Allowed: func(ctx context.Context, u *url.URL) bool {
			in, err := json.Marshal(map[string]string{"url": u.String()})
			if err != nil {
				return false
			}
			return s.checker.Check(ctx, permission.Request{Tool: "WebFetch", Input: in}).Behavior == permission.Allow
		},
		NamedHost: func(host string) bool {
			for _, r := range s.checker.Rules(permission.Allow) {
				if r.Tool == "WebFetch" && strings.EqualFold(r.Specifier, "domain:"+host) {
					return true
				}
			}
			return false
		},
	}
}
