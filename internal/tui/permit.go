package tui

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// permissionDialog asks about one tool call: allow once, allow and let
// sandboxed commands write the paths the call needs (when the sandbox
// would block it), allow always (the suggested rules, kept in
// .cohort/settings.local.json), or deny with feedback for the agent. What
// the call does — its diff, content or command — scrolls in the middle.
type permissionDialog struct {
	msg      permissionMsg
	rules    []string
	options  []permitOption
	feedback *editor // set while the user types why not
	// who names the asker (its name, else its description); cwd is where
	// a Bash command runs.
	who, cwd string
	off      int  // the first body line shown
	page     int  // body lines shown in the last frame
	placed   bool // off was set to the first change
	// wrapped is the body as shown at width wrapW (shown).
	wrapped []bodyLine
	wrapW   int
}

// permitOption is one numbered answer.
type permitOption struct {
	label string
	dec   cohort.Decision
}

func newPermissionDialog(msg permissionMsg, agents []cohort.AgentInfo, dir string) *permissionDialog {
	r := msg.req
	d := &permissionDialog{msg: msg, rules: alwaysRules(r), cwd: dir, who: r.AgentName}
	for _, a := range agents {
		if a.ID == r.AgentID || (r.AgentID == "" && a.Kind == "lead") {
			d.who = cmp.Or(d.who, a.Description)
			d.cwd = cmp.Or(a.Cwd, dir)
		}
	}
	d.who = cmp.Or(d.who, r.AgentID)
	if r.Tool != "Bash" {
		// Paths in the project read relative to it, as the model wrote
		// them: to the session's directory, not the asker's, so an edit in
		// a worktree agent's checkout reads .cohort/worktrees/…/x.go, never
		// like the user's own x.go.
		rel := strings.NewReplacer(dir+"/", "")
		d.msg.view.summary, d.msg.view.title = rel.Replace(d.msg.view.summary), rel.Replace(d.msg.view.title)
		d.msg.req.Reason = rel.Replace(r.Reason)
	}
	d.options = []permitOption{{"Yes", cohort.Decision{Allow: true}}}
	if len(r.Blocked) > 0 {
		d.options = append(d.options, permitOption{"Yes, and let commands write in " + Clean(strings.Join(r.Blocked, ", "), false) + " for this session",
			cohort.Decision{Allow: true, AllowWrite: r.Blocked}})
	}
	if len(d.rules) > 0 {
		d.options = append(d.options, permitOption{"Yes, and always allow " + Clean(strings.Join(d.rules, ", "), false),
			cohort.Decision{Allow: true, AlwaysAllow: d.rules}})
	}
	return d
}

// alwaysRules are the rules "allow always" keeps: the checks' suggestions
// (one per command of a chained Bash line), else the tool with each
// command's first word (Bash, when the line is plain enough to split), or
// the tool alone for other tools. A Bash line that cannot be split safely
// offers none.
func alwaysRules(req cohort.PermissionRequest) []string {
	if len(req.Suggestions) > 0 {
		return req.Suggestions
	}
	if req.Tool != "Bash" {
		return []string{req.Tool}
	}
	var in struct{ Command string }
	_ = json.Unmarshal(req.Input, &in)
	if strings.ContainsAny(in.Command, "\"'`$\\()<>*?[]{}\n#") {
		return nil
	}
	var out []string
	for _, part := range strings.FieldsFunc(in.Command, func(r rune) bool { return r == '&' || r == '|' || r == ';' }) {
		f := strings.Fields(part)
		if len(f) == 0 || strings.Contains(f[0], "/") || strings.Contains(f[0], "=") {
			return nil
		}
		if rule := "Bash(" + f[0] + ":*)"; !slices.Contains(out, rule) {
			out = append(out, rule)
		}
	}
	return out
}

func (d *permissionDialog) answer(dec cohort.Decision) {
	d.msg.reply <- dec // buffered: never blocks
}

func (d *permissionDialog) key(k tea.KeyPressMsg) bool {
	if d.feedback != nil {
		switch k.String() {
		case "enter":
			d.answer(cohort.Decision{Message: denyMessage(d.feedback.text())})
			return true
		case "esc":
			d.feedback = nil
			return false
		}
		d.feedback.key(k, "")
		return false
	}
	s := k.String()
	if len(s) == 1 && s[0] >= '1' && s[0] <= '9' {
		n := int(s[0] - '1')
		switch {
		case n < len(d.options):
			d.answer(d.options[n].dec)
			return true
		case n == len(d.options):
			d.feedback = &editor{}
		}
		return false
	}
	switch s {
	case "y", "enter":
		d.answer(cohort.Decision{Allow: true})
		return true
	case "a":
		if len(d.rules) > 0 {
			d.answer(cohort.Decision{Allow: true, AlwaysAllow: d.rules})
			return true
		}
	case "n":
		d.feedback = &editor{}
	case "esc":
		d.answer(cohort.Decision{Message: denyMessage("")})
		return true
	case "up":
		d.off--
	case "down":
		d.off++
	case "pgup":
		d.off -= max(d.page-1, 1)
	case "pgdown", "space":
		d.off += max(d.page-1, 1)
	case "home":
		d.off = 0
	case "end":
		d.off = max(len(d.msg.view.body), len(d.wrapped))
	}
	return false
}

func denyMessage(why string) string {
	why = strings.TrimSpace(why)
	if why == "" {
		return "The user denied this call."
	}
	return "The user denied this call: " + why
}

func (d *permissionDialog) view(w int, st styles) []string { return d.viewIn(w, 1<<20, st) }

// viewIn draws the dialog in at most h lines: the head (who asks, the
// call, its marks), the body scrolled to d.off, and the answers. When the
// terminal is too small for all of it, the answers shrink to one line
// that also says how to page, then the head gives way, then the body.
func (d *permissionDialog) viewIn(w, h int, st styles) []string {
	head := d.head(w, st)
	if d.feedback != nil {
		ask := append([]string{cut("  Tell the agent what to do instead (enter sends, esc back):", w)}, d.feedback.view("  > ", w, st)...)
		return fitLines(head, nil, ask, h)
	}
	body := d.shown(w)
	var keys []string
	for i, o := range d.options {
		keys = append(keys, cut(fmt.Sprintf("  %d %s", i+1, o.label), w))
	}
	keys = append(keys, cut(fmt.Sprintf("  %d No, and say why   (esc: no)", len(d.options)+1), w))
	room := h - len(head) - len(keys)
	if len(body) == 0 || room >= min(len(body), 3)+1 {
		return fitLines(head, d.bodyView(body, w, room, true, st), keys, h)
	}
	// Too small: every answer on one line, which also says how to page
	// and where the page is; the head gives way to two lines of the body.
	short := make([]string, 0, len(d.options)+1)
	for i := range d.options {
		short = append(short, fmt.Sprintf("%d %s", i+1, []string{"yes", "yes+", "yes+"}[min(i, 2)]))
	}
	short = append(short, fmt.Sprintf("%d no", len(d.options)+1))
	head = head[1:] // the call first; who asks gives way
	head = head[:max(min(len(head), h-3), min(len(head), 1))]
	lines := d.bodyView(body, w, h-len(head)-1, false, st)
	pos := fmt.Sprintf(" · ↑↓ pgup/pgdn %d/%d", d.off+1, len(body))
	keys = []string{st.bold.Render(cut(strings.Join(short, " · ")+pos, w))}
	return fitLines(head, lines, keys, h)
}

// fitLines joins head, body and tail, dropping from the head's end (then
// the body's) what does not fit in h lines; the tail always shows.
func fitLines(head, body, tail []string, h int) []string {
	for len(head)+len(body)+len(tail) > h && len(body) > 0 {
		body = body[:len(body)-1]
	}
	for len(head)+len(tail) > h && len(head) > 0 {
		head = head[:len(head)-1]
	}
	out := append(append(append([]string(nil), head...), body...), tail...)
	return out[max(len(out)-h, 0):]
}

// head is who asks, the call in one line, and what the user must know
// before saying yes: the call runs outside the sandbox, the sandbox would
// block it, where a command runs, why it asks, what is not shown.
func (d *permissionDialog) head(w int, st styles) []string {
	r, v := d.msg.req, d.msg.view
	head := st.warn.Render("Permission")
	if r.AgentKind != "" && r.AgentKind != "lead" {
		head += " " + badge(d.who, r.Color) + st.dim.Render(" "+Clean(r.AgentKind, false)+" asks")
	}
	out := []string{cut(head, w), st.tool.Render(cut("  "+v.summary, w))}
	if r.Unsandboxed {
		out = append(out, st.errText.Render(cut("  ⚠ runs OUTSIDE the sandbox (dangerouslyDisableSandbox): it can write and reach anything you can", w)))
	}
	for _, p := range r.Blocked {
		out = append(out, st.errText.Render(cut("  ⚠ the sandbox keeps commands from writing in "+Clean(p, false)+": as approved, the call will fail there", w)))
	}
	if r.Tool == "Bash" {
		out = append(out, st.dim.Render(cut("  in "+Clean(d.cwd, false), w)))
	}
	if v.title != "" {
		out = append(out, st.bold.Render(cut("  "+Clean(v.title, false), w)))
	}
	for _, n := range v.notes {
		out = append(out, st.warn.Render(cut("  "+Clean(n, false), w)))
	}
	if r.Reason != "" {
		for _, l := range wrap(Clean(clip.Runes(r.Reason, 300), false), w-2) {
			out = append(out, st.dim.Render("  "+l))
		}
	}
	return out
}

// shown is the body as drawn at width w. A command's lines wrap, numbered
// on their first row, so the user reads all of what is approved; a
// one-line command that the summary line shows whole has none. Other
// bodies are drawn as they are, each line cut at the edge.
func (d *permissionDialog) shown(w int) []bodyLine {
	v := d.msg.view
	if !v.wrap || len(v.body) == 0 {
		return v.body
	}
	if d.wrapW == w && d.wrapped != nil {
		return d.wrapped
	}
	one := v.body[0].text
	if len(v.body) == 1 && utf8.RuneCountInString(one) <= 200 && ansi.StringWidth("  "+v.summary) <= w {
		d.wrapW, d.wrapped = w, []bodyLine{}
		return nil
	}
	room := max(w-len(fmt.Sprint(len(v.body)))-5, 8) // "  N " + mark + " "
	var out []bodyLine
	for _, l := range v.body {
		for i, row := range strings.Split(ansi.Hardwrap(l.text, room, true), "\n") {
			if i > 0 {
				l.num = 0
			}
			l.text = row
			out = append(out, l)
		}
	}
	d.wrapW, d.wrapped = w, out
	return out
}

// bodyView draws h lines of body from d.off (at first, the first change
// with some context above it), and under them, when they do not all fit
// and pos is set, where the page is.
func (d *permissionDialog) bodyView(body []bodyLine, w, h int, pos bool, st styles) []string {
	if len(body) == 0 || h <= 0 {
		d.page = 0
		return nil
	}
	page := h
	if len(body) > h && pos {
		page = max(h-1, 1)
	}
	d.page = page
	if !d.placed {
		d.placed = true
		for i, l := range body {
			if l.kind == '-' || l.kind == '+' {
				d.off = max(i-min(3, (page-1)/2), 0)
				break
			}
		}
	}
	d.off = max(min(d.off, len(body)-page), 0)
	top := 0 // the widest number: a wrapped row or a gap line has none
	for _, l := range body {
		top = max(top, l.num)
	}
	numW := len(fmt.Sprint(top))
	var out []string
	for _, l := range body[d.off:min(d.off+page, len(body))] {
		out = append(out, bodyText(l, numW, w, st))
	}
	if len(body) > page && pos {
		out = append(out, st.dim.Render(cut(fmt.Sprintf("  lines %d–%d of %d · ↑↓ pgup/pgdn to scroll", d.off+1, d.off+len(out), len(body)), w)))
	}
	return out
}

// bodyText draws one body line: its number, its mark and its text, a
// removal red and an addition green.
func bodyText(l bodyLine, numW, w int, st styles) string {
	if l.kind == '~' {
		return st.dim.Render(cut("  "+cmp.Or(l.text, "⋯"), w))
	}
	num := strings.Repeat(" ", numW)
	if l.num > 0 {
		num = fmt.Sprintf("%*d", numW, l.num)
	}
	mark := " "
	if l.kind == '-' || l.kind == '+' {
		mark = string(l.kind)
	}
	line := cut("  "+num+" "+mark+" "+l.text, w)
	switch l.kind {
	case '-':
		return st.errText.Render(line)
	case '+':
		return st.ok.Render(line)
	}
	return line
}
