package teammate

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/tool"
)

// FindAddress is the to of a SendMessage that sends nothing and lists the
// sessions of this machine whose title is options.session_name, as
// Claude Code 2.1.332's "@find" does.
const FindAddress = "@find"

// sessionName applies options.session_name, Claude Code's check of a
// session's title: with to "@find" nothing is sent and the sessions of
// that exact title are listed (done true); with a session's id as to, the
// message goes on only if that session's title is session_name now (to is
// returned as its uds: address). Any other to is refused: the title names
// sessions, not agents.
func (t *sendTool) sessionName(ctx context.Context, in SendInput) (res tool.Result, to string, done bool) {
	name := ""
	if in.Options != nil {
		name = strings.TrimSpace(in.Options.SessionName)
	}
	if name == "" {
		if in.To == FindAddress {
			return tool.Errorf("SendMessage: %q sends nothing: it lists the sessions whose title is options.session_name, and none was given. Set options.session_name to a session's exact title.", FindAddress), "", true
		}
		return tool.Result{}, in.To, false
	}
	ps := t.l.peers(ctx)
	if in.To == FindAddress {
		var hits []Peer
		for _, p := range ps {
			if p.Name == in.Options.SessionName {
				hits = append(hits, p)
			}
		}
		if len(hits) == 0 {
			return tool.Text(fmt.Sprintf("No session on this machine is titled %q; nothing was sent.%s", in.Options.SessionName, t.l.knownSessions(ctx))), "", true
		}
		return tool.Text(fmt.Sprintf("Nothing was sent. Sessions titled %q: %s. Send again with one's id as to.", in.Options.SessionName, peerList(hits))), "", true
	}
	for _, p := range ps {
		if in.To != p.SessionID && in.To != p.ID {
			continue
		}
		if p.Name != in.Options.SessionName {
			return tool.Errorf("SendMessage: not sent: session %s is titled %q now, not %q.", in.To, p.Name, in.Options.SessionName), "", true
		}
		return tool.Result{}, "uds:" + p.Socket, false
	}
	return tool.Errorf("SendMessage: not sent: options.session_name works only with another session's id, or %q, as to; %q is neither. To message an agent of this session, send again without options.session_name.%s",
		FindAddress, in.To, t.l.knownSessions(ctx)), "", true
}
