package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// dialog takes the keys while it is shown, in place of the input.
type dialog interface {
	view(width int, st styles) []string
	// key handles a key; done reports the dialog closed.
	key(k tea.KeyPressMsg) (done bool)
}

// arrive shows a prompt from an agent, or queues it behind the one shown,
// and rings when the terminal is not in focus.
func (m *Model) arrive(msg tea.Msg) tea.Cmd {
	var d dialog
	note := ""
	switch msg := msg.(type) {
	case permissionMsg:
		d = newPermissionDialog(msg, m.sess.Agents(), m.opts.Dir)
		note = fmt.Sprintf("Cohort needs your permission to use %s", msg.req.Tool)
	case askMsg:
		d = newAskDialog(msg)
		note = "Cohort has a question for you"
	case planMsg:
		d = &planDialog{msg: msg}
		note = fmt.Sprintf("%s asks you to approve a plan", msg.req.AgentName)
	}
	if m.dialog == nil {
		m.dialog = d
	} else {
		m.prompts = append(m.prompts, d)
	}
	m.notify(note)
	return nil
}

// withdraw drops the prompts of an asker that stopped waiting.
func (m *Model) withdraw(ctx context.Context) {
	gone := func(d dialog) bool {
		switch d := d.(type) {
		case *permissionDialog:
			return d.msg.ctx == ctx
		case *askDialog:
			return d.msg.ctx == ctx
		case *planDialog:
			return d.msg.ctx == ctx
		}
		return false
	}
	m.prompts = slices.DeleteFunc(m.prompts, gone)
	if m.dialog != nil && gone(m.dialog) {
		m.nextDialog()
	}
}

func (m *Model) nextDialog() {
	m.dialog = nil
	if len(m.prompts) > 0 {
		m.dialog, m.prompts = m.prompts[0], m.prompts[1:]
	}
}

func (m *Model) dialogKey(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" && m.running {
		m.sess.Interrupt()
	}
	if m.dialog.key(k) {
		m.nextDialog()
	}
	cmd := m.pendingCmd
	m.pendingCmd = nil
	return cmd
}

// badge is an agent's name on its colour.
func badge(name, color string) string {
	st := lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(agentColor(color).GetForeground())
	return st.Render(" @" + Clean(clip.Runes(name, 30), false) + " ")
}

// askDialog is AskUserQuestion: each question's options by number, or an
// answer typed in.
type askDialog struct {
	msg     askMsg
	i       int
	answers map[string]string
	typed   editor
}

func newAskDialog(msg askMsg) *askDialog {
	return &askDialog{msg: msg, answers: map[string]string{}}
}

func (d *askDialog) key(k tea.KeyPressMsg) bool {
	qs := d.msg.req.Questions
	if len(qs) == 0 {
		d.msg.reply <- d.answers
		return true
	}
	q := qs[d.i]
	s := k.String()
	answer := ""
	switch {
	case s == "esc":
		d.msg.reply <- d.answers
		return true
	case s == "enter":
		answer = strings.TrimSpace(d.typed.text())
		if answer == "" {
			return false
		}
	case len(s) == 1 && s[0] >= '1' && s[0] <= '9' && d.typed.text() == "":
		n := int(s[0] - '1')
		if n >= len(q.Options) {
			return false
		}
		answer = q.Options[n].Label
	default:
		d.typed.key(k, "")
		return false
	}
	d.answers[q.Question] = answer
	d.typed.set("")
	d.i++
	if d.i == len(qs) {
		d.msg.reply <- d.answers
		return true
	}
	return false
}

func (d *askDialog) view(w int, st styles) []string {
	qs := d.msg.req.Questions
	if len(qs) == 0 {
		return []string{"(no questions)"}
	}
	q := qs[d.i]
	out := []string{st.warn.Render(cut(fmt.Sprintf("Question %d/%d", d.i+1, len(qs)), w))}
	for _, l := range wrap(Clean(q.Question, false), w) {
		out = append(out, st.bold.Render(l))
	}
	for i, o := range q.Options {
		line := fmt.Sprintf("  %d %s", i+1, Clean(o.Label, false))
		if o.Description != "" {
			line += st.dim.Render(" — " + Clean(o.Description, false))
		}
		out = append(out, cut(line, w))
	}
	return append(out, d.typed.view("  or type an answer: ", w, st)...)
}

// confirmDialog is a yes/no question.
type confirmDialog struct {
	question string
	yes      func()
}

func (d *confirmDialog) key(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "y", "Y":
		d.yes()
		return true
	case "n", "N", "esc":
		return true
	}
	return false
}

func (d *confirmDialog) view(w int, st styles) []string {
	return []string{st.warn.Render(cut(d.question+" (y/n)", w))}
}

// pickerDialog chooses one of a list (the /resume picker).
type pickerDialog struct {
	title string
	items []string
	sel   int
	pick  func(i int)
}

func (d *pickerDialog) key(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "up", "k":
		d.sel = max(d.sel-1, 0)
	case "down", "j":
		d.sel = min(d.sel+1, len(d.items)-1)
	case "enter":
		if len(d.items) > 0 {
			d.pick(d.sel)
		}
		return true
	case "esc":
		return true
	}
	return false
}

func (d *pickerDialog) view(w int, st styles) []string {
	out := []string{st.bold.Render(cut(d.title, w))}
	from := max(d.sel-7, 0)
	for i := from; i < len(d.items) && i < from+8; i++ {
		mark := "  "
		if i == d.sel {
			mark = "▸ "
		}
		line := cut(mark+d.items[i], w)
		if i == d.sel {
			line = st.bold.Render(line)
		}
		out = append(out, line)
	}
	if len(d.items) == 0 {
		out = append(out, st.dim.Render("  (none)"))
	}
	return out
}

// planDialog shows a teammate's plan: y approves, n rejects with feedback
// typed in (Enter sends it).
type planDialog struct {
	msg      planMsg
	feedback *editor
	approve  bool
}

func (d *planDialog) key(k tea.KeyPressMsg) bool {
	if d.feedback != nil {
		switch k.String() {
		case "enter":
			d.msg.reply <- cohort.PlanDecision{Approve: d.approve, Feedback: strings.TrimSpace(d.feedback.text())}
			return true
		case "esc":
			d.feedback = nil
			return false
		}
		d.feedback.key(k, "")
		return false
	}
	switch k.String() {
	case "y", "1":
		d.msg.reply <- cohort.PlanDecision{Approve: true}
		return true
	case "a", "2":
		d.approve, d.feedback = true, &editor{}
	case "n", "3":
		d.approve, d.feedback = false, &editor{}
	}
	return false
}

func (d *planDialog) view(w int, st styles) []string {
	r := d.msg.req
	out := []string{cut(st.warn.Render("Plan")+" "+badge(r.AgentName, r.Color)+st.dim.Render(" asks for your approval before it changes anything"), w)}
	lines := strings.Split(strings.TrimSpace(Clean(clip.Prefix(r.Plan, maxEntryText), true)), "\n")
	for i, l := range lines {
		if i == 8 {
			out = append(out, st.dim.Render(cut(fmt.Sprintf("  … %d more lines", len(lines)-i), w)))
			break
		}
		out = append(out, cut("  "+l, w))
	}
	if d.feedback != nil {
		verdict := "rejected"
		if d.approve {
			verdict = "approved"
		}
		out = append(out, cut("  Feedback with the plan "+verdict+" (enter sends, esc back):", w))
		return append(out, d.feedback.view("  > ", w, st)...)
	}
	return append(out, cut("  1 Approve   2 Approve with feedback   3 Reject and say why", w))
}
