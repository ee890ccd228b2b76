package tui

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// The rewind: /rewind, or esc twice on an empty input, lists the lead's
// turns (the prompts checkpoints were taken before, newest first); then
// what goes back (code and conversation, code, conversation); then the
// plan, from a dry run: the files that will change, the files the user
// changed after the checkpoint (refused until f says to overwrite them)
// and the branches agents committed to (moved back only if b says so).

type turnsMsg struct {
	rep *cohort.RewindReport
	err error
}

type rewindPlanMsg struct {
	req cohort.RewindRequest
	rep *cohort.RewindReport
	err error
}

type rewoundMsg struct {
	req cohort.RewindRequest
	rep *cohort.RewindReport
	err error
}

// rewindModes are the choices of what goes back, with their Mode.
var rewindModes = []struct{ label, mode string }{
	{"code and conversation", "both"},
	{"code only (the files)", "code"},
	{"conversation only", "conversation"},
}

// listTurns asks the session for its checkpoints.
func (m *Model) listTurns() tea.Cmd {
	if m.running && m.interrupt {
		// Esc was pressed and its line drawn, but the turn has not ended
		// yet (a tool call winding down): the person did what the refusal
		// below would ask, so the list opens when the turn has ended.
		m.rewindAfter = true
		m.chat.note(entryNote, "the interrupted turn is still ending; the rewind opens when it has")
		return nil
	}
	if m.running {
		m.chat.note(entryError, "a turn is running: interrupt it first (esc), then rewind")
		return nil
	}
	sess := m.sess
	return m.background(func(ctx context.Context) tea.Msg {
		rep, err := sess.Rewind(ctx, cohort.RewindRequest{})
		return turnsMsg{rep, err}
	})
}

// pickTurn shows the turns; the pick asks what goes back.
func (m *Model) pickTurn(msg turnsMsg) {
	if msg.err != nil {
		m.chat.note(entryError, "rewind: "+msg.err.Error())
		return
	}
	turns := slices.Clone(msg.rep.Turns)
	slices.Reverse(turns)
	if len(turns) == 0 {
		m.chat.note(entryNote, "nothing to rewind: this session has no checkpoints yet (one is taken before each prompt)")
		return
	}
	var items []string
	for _, t := range turns {
		p, _, _ := strings.Cut(t.Prompt, "\n")
		items = append(items, fmt.Sprintf("%3d  %s", t.Turn, Clean(clip.Runes(p, 80), false)))
	}
	m.dialog = &pickerDialog{title: "Rewind to before which prompt? (enter, esc)", items: items, pick: func(i int) {
		turn := turns[i].Turn
		var modes []string
		for _, md := range rewindModes {
			modes = append(modes, md.label)
		}
		m.prompts = append([]dialog{&pickerDialog{title: fmt.Sprintf("Rewind what to before turn %d? (enter, esc)", turn), items: modes, pick: func(j int) {
			req := cohort.RewindRequest{Turn: turn, Mode: rewindModes[j].mode, DryRun: true}
			m.pendingCmd = m.rewindCmd(req, func(rep *cohort.RewindReport, err error) tea.Msg { return rewindPlanMsg{req, rep, err} })
		}}}, m.prompts...)
	}}
}

// rewindCmd runs a rewind (or its dry run) on the model's goroutine.
func (m *Model) rewindCmd(req cohort.RewindRequest, done func(*cohort.RewindReport, error) tea.Msg) tea.Cmd {
	sess := m.sess
	return m.background(func(ctx context.Context) tea.Msg {
		rep, err := sess.Rewind(ctx, req)
		return done(rep, err)
	})
}

// showRewindPlan shows the dry run's plan for the user to confirm.
func (m *Model) showRewindPlan(msg rewindPlanMsg) {
	if msg.err != nil {
		m.chat.note(entryError, "rewind: "+msg.err.Error())
		return
	}
	d := &rewindDialog{req: msg.req, rep: msg.rep, dir: m.opts.Dir}
	if msg.req.Files() {
		d.running = m.runningNames()
	}
	d.req.DryRun = false
	d.start = func(req cohort.RewindRequest) {
		m.pendingCmd = m.rewindCmd(req, func(rep *cohort.RewindReport, err error) tea.Msg { return rewoundMsg{req, rep, err} })
	}
	m.dialog = d
}

// runningNames names the background agents and teammates still running:
// a rewind of the files stops them first, since their edits would
// interleave with it, and the plan asks before it does.
func (m *Model) runningNames() []string {
	ids := m.keepRunning()
	var names []string
	for _, a := range m.sess.Agents() {
		if slices.Contains(ids, a.ID) {
			names = append(names, cmp.Or(a.Name, a.Description, a.ID))
		}
	}
	return names
}

// rewound reports a rewind that ran.
func (m *Model) rewound(msg rewoundMsg) {
	if msg.err != nil {
		m.chat.note(entryError, "rewind: "+msg.err.Error())
		return
	}
	var parts []string
	if msg.req.Mode != "conversation" && msg.rep.Done != nil {
		parts = append(parts, fmt.Sprintf("%s restored, %s deleted", plural(len(msg.rep.Write), "file"), plural(len(msg.rep.Delete), "file")))
		for _, mv := range msg.rep.Done.Moved {
			parts = append(parts, "moved "+mv)
		}
	}
	if msg.rep.Conversation {
		parts = append(parts, "the conversation is back where it was before that prompt")
	}
	m.chat.note(entryNote, fmt.Sprintf("rewound to before turn %d: %s", msg.req.Turn, strings.Join(parts, "; ")))
}

// rewindDialog is a rewind's plan: enter rewinds, f overwrites the files
// the user changed, b moves branches back, esc cancels.
type rewindDialog struct {
	req     cohort.RewindRequest
	rep     *cohort.RewindReport
	refused string
	running []string // agents the rewind stops first
	dir     string   // the project: paths are shown relative to it
	start   func(cohort.RewindRequest)
}

func (d *rewindDialog) key(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "esc", "n":
		return true
	case "f":
		d.req.Force, d.refused = !d.req.Force, ""
	case "b":
		d.req.MoveBranch = !d.req.MoveBranch
	case "enter", "y":
		if len(d.rep.UserEdited) > 0 && !d.req.Force {
			d.refused = "refused: it would overwrite files you changed after the checkpoint (f allows it, esc cancels)"
			return false
		}
		d.start(d.req)
		return true
	}
	return false
}

// rewindListed is how many paths of each kind the plan shows.
const rewindListed = 8

func (d *rewindDialog) view(w int, st styles) []string {
	what := map[string]string{"both": "code and conversation", "code": "code", "conversation": "conversation"}[d.req.Mode]
	out := []string{st.bold.Render(cut(fmt.Sprintf("Rewind %s to before turn %d?", what, d.req.Turn), w))}
	list := func(label string, paths []string, style func(...string) string) {
		for i, p := range paths {
			if i == rewindListed {
				out = append(out, st.dim.Render(cut(fmt.Sprintf("    … and %d more", len(paths)-i), w)))
				break
			}
			if rel, err := filepath.Rel(d.dir, p); err == nil && filepath.IsLocal(rel) {
				p = rel
			}
			out = append(out, style(cut("  "+label+" "+Clean(p, false), w)))
		}
	}
	if d.req.Mode != "conversation" {
		list("restore", d.rep.Write, st.dim.Render)
		list("delete ", d.rep.Delete, st.dim.Render)
		if len(d.rep.Write)+len(d.rep.Delete) == 0 {
			out = append(out, st.dim.Render("  no file differs from the checkpoint"))
		}
		keep := "kept"
		if d.req.Force {
			keep = "OVERWRITTEN"
		}
		list("changed by you after the checkpoint ("+keep+", f toggles):", d.rep.UserEdited, st.warn.Render)
		list("protected, not restored here (cohort rewind --protected):", d.rep.Protected, st.warn.Render)
		list("not restorable:", d.rep.NotRestorable, st.warn.Render)
		for _, b := range d.rep.Branches {
			move := "left as it is"
			if d.req.MoveBranch {
				move = "MOVED BACK"
			}
			out = append(out, st.warn.Render(cut(fmt.Sprintf("  %s gained %s since the checkpoint (%s, b toggles):", b.Ref, plural(len(b.Commits), "commit"), move), w)))
			list("  ", b.Commits, st.dim.Render)
		}
		list("problem:", d.rep.Problems, st.warn.Render)
	}
	if len(d.running) > 0 {
		out = append(out, st.warn.Render(cut(fmt.Sprintf("  %s still running, stopped before the rewind: %s", plural(len(d.running), "agent"), strings.Join(d.running, ", ")), w)))
	}
	if d.refused != "" {
		out = append(out, st.warn.Render(cut(d.refused, w)))
	}
	if len(d.running) > 0 {
		return append(out, st.dim.Render(cut("enter stops them and rewinds · esc cancels", w)))
	}
	return append(out, st.dim.Render(cut("enter rewinds · esc cancels", w)))
}
