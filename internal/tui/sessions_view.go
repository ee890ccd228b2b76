package tui

import (
	"fmt"
	"strings"
	"time"
)

// sessCols are the sessions view's columns after the name: id, state,
// agents, cost, last activity.
const sessCols = "%-8s  %-11s %6s  %9s  %8s"

// frame is the sessions view as text: a header, the list, the selected
// session's place and detail, a notice, and the keys (or the prompt of a
// new session) last. Every line fits the width, the frame the height.
func (m *sessionsModel) frame() string {
	w, h := m.width, m.high
	bottom := m.bottomLines(w)
	listH := max(h-len(bottom), 1)
	lines := m.listLines(w, listH)
	for len(lines) < listH {
		lines = append(lines, "")
	}
	lines = append(lines[:listH], bottom...)
	if len(lines) > h {
		lines = lines[len(lines)-h:]
	}
	return strings.Join(lines, "\n")
}

func (m *sessionsModel) listLines(w, h int) []string {
	running := 0
	var total float64
	for _, r := range m.rows {
		if r.Alive {
			running++
		}
		total += r.CostUSD
	}
	head := m.st.bold.Render("Sessions on this machine") + m.st.dim.Render(fmt.Sprintf(" · %d running · %s", running, cost(total)))
	out := []string{cut(head, w)}
	switch {
	case m.listErr != "":
		return append(out, m.st.errText.Render(cut(Clean(m.listErr, false), w)))
	case !m.loaded:
		return append(out, m.st.dim.Render("reading…"))
	case len(m.rows) == 0:
		return append(out, m.st.dim.Render(cut("No background sessions. Press n to start one.", w)))
	}
	nameW := max(w-len(fmt.Sprintf(sessCols, "", "", "", "", ""))-1, 8)
	out = append(out, m.st.dim.Render(cut(fit("  session", nameW)+" "+fmt.Sprintf(sessCols, "id", "state", "agents", "cost", "active"), w)))
	rows := max(h-len(out)-2, 1) // two lines for the selected one's detail
	if m.sel < m.top {
		m.top = m.sel
	}
	if m.sel >= m.top+rows {
		m.top = m.sel - rows + 1
	}
	m.top = min(max(m.top, 0), max(len(m.rows)-rows, 0))
	for i := m.top; i < len(m.rows) && i < m.top+rows; i++ {
		out = append(out, m.row(i, w, nameW))
	}
	r := m.rows[m.sel]
	out = append(out, m.st.dim.Render(cut("  in "+Clean(r.Dir, false), w)))
	if r.Detail != "" {
		out = append(out, cut("  "+Clean(r.Detail, false), w))
	}
	return out
}

func (m *sessionsModel) row(i, width, nameW int) string {
	r := m.rows[i]
	mark := "  "
	if i == m.sel {
		mark = "▸ "
	}
	state := sessionState(r)
	if m.stopping[r.ID] {
		state = "… stopping"
	}
	dot := m.st.ok.Render("●")
	switch {
	case !r.Alive:
		dot = m.st.dim.Render("○")
	case r.Status == "waiting":
		dot = m.st.warn.Render("●")
	}
	cols := fmt.Sprintf(sessCols, Clean(r.ID, false), state, fmt.Sprint(r.Agents), cost(r.CostUSD), ago(r.Active, m.opts.Now()))
	line := fit(mark+dot+" "+Clean(r.Name, false), nameW) + " " + cols
	switch {
	case i == m.sel:
		return m.st.bold.Render(cut(line, width))
	case !r.Alive:
		return m.st.dim.Render(cut(line, width))
	}
	return cut(line, width)
}

// sessionState is a session's state in a word or two, with its sign.
func sessionState(r SessionRow) string {
	if r.Alive && r.Status == "waiting" {
		return "? waiting"
	}
	switch r.State {
	case "working":
		return "◐ working"
	case "blocked":
		return "? waiting"
	case "done":
		return "✓ done"
	case "stopped":
		return "■ stopped"
	case "failed":
		return "✗ failed"
	case "dead":
		return "✗ dead"
	}
	return Clean(r.State, false)
}

// ago is how long ago t was, in one short word.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// bottomLines are the notice (or the first warning) and the keys, or the
// new session's prompt while it is typed.
func (m *sessionsModel) bottomLines(w int) []string {
	var out []string
	switch {
	case m.notice != "":
		out = append(out, cut(Clean(m.notice, false), w))
	case len(m.warnings) > 0:
		out = append(out, m.st.warn.Render(cut("warning: "+Clean(m.warnings[0], false), w)))
	}
	out = append(out, m.st.border.Render(strings.Repeat("─", w)))
	if m.typing {
		out = append(out, m.st.dim.Render(cut("new background session "+Clean(m.opts.Defaults, false)+" · enter starts it · esc cancels", w)))
		return append(out, m.input.view("> ", w, m.st)...)
	}
	return append(out, m.st.dim.Render(cut("↑↓ select · enter attach · n new session · x stop · q quit", w)))
}
