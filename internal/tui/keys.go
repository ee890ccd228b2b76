package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/cohort-dev/cohort"
)

// key handles a key press: the dialog's, then the screen's, then the
// input's.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.dialog != nil {
		return m.dialogKey(k)
	}
	armed := m.escArmed
	m.escArmed = false
	switch k.String() {
	case "ctrl+c":
		if m.input.text() != "" {
			m.input.set("")
			return nil
		}
		if m.running {
			m.sess.Interrupt()
			return nil
		}
		return tea.Quit
	case "ctrl+d":
		if m.input.text() == "" {
			return tea.Quit
		}
	case "esc":
		return m.escape(armed)
	case "shift+tab":
		m.cycleMode()
		return nil
	case "ctrl+t":
		if m.screen == screenTree {
			m.screen = screenChat
		} else {
			m.screen = screenTree
			return m.refreshCmd()
		}
		return nil
	case "ctrl+o":
		m.expanded = !m.expanded
		return nil
	case "ctrl+b":
		if m.screen == screenChat {
			m.backgroundAll()
			return nil
		}
	}
	if m.screen == screenTree && m.treeKey(k) {
		return nil
	}
	if k.String() == "enter" {
		return m.submit()
	}
	m.input.key(k, m.opts.Dir)
	return nil
}

// escape: in the tree, back to the conversation; during a turn, interrupt
// it; right after an interrupt, offer to stop the background agents too;
// twice on an empty input, rewind (armed: the key before was such an Esc).
func (m *Model) escape(armed bool) tea.Cmd {
	switch {
	case m.messageTarget != "":
		m.messageTarget = ""
	case m.screen == screenTree:
		m.screen = screenChat
	case m.running:
		m.sess.Interrupt()
		m.interrupt = true
		note := "interrupted by you"
		if n := len(m.keepRunning()); n > 0 {
			note += fmt.Sprintf(" · %s still running (esc again to stop)", plural(n, "background agent"))
		}
		m.chat.note(entryNote, note)
	case m.interrupt:
		m.interrupt = false
		if ids := m.keepRunning(); len(ids) > 0 {
			m.dialog = &confirmDialog{question: fmt.Sprintf("Stop %d background agent(s) too?", len(ids)), yes: func() {
				for _, id := range ids {
					if err := m.sess.StopAgent(id); err != nil {
						m.chat.note(entryError, err.Error())
					}
				}
				m.chat.note(entryNote, fmt.Sprintf("stopped %d agent(s)", len(ids)))
			}}
		}
	case m.input.text() == "" && armed:
		return m.listTurns()
	case m.input.text() == "":
		m.escArmed = true
	}
	return nil
}

// keepRunning lists the agents an interrupt leaves running: every running
// agent but the lead and the synchronous subagents (they stop with the
// lead's turn), and not the steps of a workflow run (stopping the run
// stops them).
func (m *Model) keepRunning() []string {
	var ids []string
	agents := m.sess.Agents()
	runs := map[string]bool{}
	for _, a := range agents {
		if a.Workflow != nil {
			runs[a.ID] = true
		}
	}
	for _, a := range agents {
		if a.Kind != "lead" && a.Kind != "subagent" && !runs[a.ParentID] && (a.State == cohort.AgentRunning || a.State == cohort.AgentStarting) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// plural is "1 agent", "2 agents".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// backgroundAll moves the running synchronous subagents the lead waits
// for to the background (Ctrl+B in the conversation), so the lead's turn
// goes on.
func (m *Model) backgroundAll() {
	n := 0
	for _, a := range m.sess.Agents() {
		if a.Kind == "subagent" && a.State == cohort.AgentRunning {
			if err := m.sess.Background(a.ID); err != nil {
				m.chat.note(entryError, err.Error())
				continue
			}
			n++
		}
	}
	if n > 0 {
		m.chat.note(entryNote, fmt.Sprintf("moved %s to the background", plural(n, "subagent")))
	}
}

func (m *Model) cycleMode() {
	next := nextMode(m.mode, m.bypassOK)
	if err := m.sess.SetPermissionMode(next); err != nil {
		m.chat.note(entryError, err.Error())
		return
	}
	m.mode = next
}

// treeKey handles the tree's keys; false for those it leaves to the input.
func (m *Model) treeKey(k tea.KeyPressMsg) bool {
	if m.input.text() != "" && k.String() != "up" && k.String() != "down" {
		return false
	}
	a, ok := m.tree.current()
	switch k.String() {
	case "up", "k":
		m.tree.move(-1)
	case "down", "j":
		m.tree.move(+1)
	case "pgup":
		m.tree.move(-10)
	case "pgdown":
		m.tree.move(+10)
	case "m":
		if ok {
			m.messageTarget = a.ID
			if a.Name != "" {
				m.messageTarget = a.Name
			}
			m.screen = screenChat
		}
	case "x":
		if ok {
			if err := m.sess.StopAgent(a.ID); err != nil {
				m.chat.note(entryError, err.Error())
			}
		}
	case "ctrl+b":
		if ok {
			if err := m.sess.Background(a.ID); err != nil {
				m.chat.note(entryError, err.Error())
			}
		}
	default:
		return false
	}
	return true
}

// submit acts on the input: a shell command, a slash command or a prompt.
func (m *Model) submit() tea.Cmd {
	text := m.input.submit()
	switch {
	case text == "":
		return nil
	case strings.HasPrefix(text, "!"):
		return m.shell(strings.TrimSpace(text[1:]))
	case strings.HasPrefix(text, "/") && m.messageTarget == "":
		return m.command(text)
	}
	m.submitPrompt(text)
	return nil
}
