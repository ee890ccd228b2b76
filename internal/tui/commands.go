package tui

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/slashcmd"
)

// builtins are the slash commands, with what each does for /help.
var builtins = []struct{ name, help string }{
	{"agents", "show the agent tree (ctrl+t)"},
	{"tasks", "list the background work and its state"},
	{"team", "list the teammates"},
	{"model", "show or set the lead's model: /model opus"},
	{"clear", "start a new conversation"},
	{"compact", "summarise the conversation so far"},
	{"resume", "continue an earlier session of this project"},
	{"rewind", "put the files and/or the conversation back to before a prompt (esc esc)"},
	{"cost", "what each agent and the session cost"},
	{"flags", "the feature flags and where they were set"},
	{"permissions", "the permission mode and how to change it"},
	{"help", "this list"},
	{"exit", "leave the session (ctrl+d on an empty line; /quit too)"},
}

type textMsg struct{ text string }

// command runs a slash command.
func (m *Model) command(line string) tea.Cmd {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	args = strings.TrimSpace(args)
	switch name {
	case "help":
		var b strings.Builder
		b.WriteString("Commands:")
		for _, c := range builtins {
			fmt.Fprintf(&b, "\n  /%-12s %s", c.name, c.help)
		}
		for _, c := range userCommands(m.opts.Dir) {
			fmt.Fprintf(&b, "\n  /%-12s %s", c.Name, commandHelp(c))
		}
		b.WriteString("\nKeys: esc interrupt · shift+tab mode · ctrl+t tree · ctrl+b background (running subagents) · ctrl+o expand · ! shell · @ path (tab)")
		m.chat.note(entryNote, b.String())
	case "exit", "quit":
		return tea.Quit
	case "rewind":
		return m.listTurns()
	case "agents":
		m.screen = screenTree
		return m.refreshCmd()
	case "tasks", "team", "cost":
		m.refresh()
		m.chat.note(entryNote, m.listing(name))
	case "model":
		if args == "" {
			m.pickModel()
			break
		}
		m.switchModel(args, "command")
	case "clear":
		if err := m.sess.Clear(); err != nil {
			m.chat.note(entryError, err.Error()+" (interrupt first: esc)")
			break
		}
		m.chat = newTranscript()
		m.tree.forget()
		m.tasks.forget()
		m.chat.note(entryNote, "new conversation")
	case "compact":
		sess := m.sess
		return m.background(func(ctx context.Context) tea.Msg {
			if err := sess.Compact(ctx); err != nil {
				return textMsg{"compact: " + err.Error()}
			}
			return textMsg{"compacted"}
		})
	case "resume":
		return m.listSessions()
	case "flags":
		if m.opts.Flags == nil {
			break
		}
		flags := m.opts.Flags
		return m.background(func(ctx context.Context) tea.Msg {
			var b bytes.Buffer
			if err := flags(ctx, &b); err != nil {
				return textMsg{"flags: " + err.Error()}
			}
			return textMsg{strings.TrimRight(b.String(), "\n")}
		})
	case "permissions":
		m.chat.note(entryNote, "permission mode: "+m.mode+" (shift+tab cycles default → acceptEdits → plan)\n"+
			"rules: permissions.allow / deny in .cohort/settings.json; \"always allow\" answers go to .cohort/settings.local.json")
	default:
		for _, c := range userCommands(m.opts.Dir) {
			if c.Name != name {
				continue
			}
			// The session expands a prompt's command, typed while idle or
			// ahead into a running turn (and fires its
			// UserPromptExpansion hooks); a message to an agent is read
			// as it is, so it is expanded here.
			if m.messageTarget != "" {
				m.submitPrompt(c.Expand(args))
			} else {
				m.submitPrompt(line)
			}
			return nil
		}
		m.chat.note(entryError, fmt.Sprintf("unknown command /%s (try /help)", name))
	}
	return nil
}

// pickModels are the models /model offers in its picker: the aliases
// every provider's catalog resolves.
var pickModels = []string{"opus", "sonnet", "haiku"}

// pickModel shows the /model picker, the current model first.
func (m *Model) pickModel() {
	items := []string{cmp.Or(m.model, "default") + " (current)"}
	for _, name := range pickModels {
		if name != m.model {
			items = append(items, name)
		}
	}
	m.dialog = &pickerDialog{title: "Model for the lead's next request (enter, esc)", items: items, pick: func(i int) {
		if i > 0 {
			m.switchModel(items[i], "picker")
		}
	}}
}

// switchModel switches the lead's model; source is the model switch
// hooks' ("command" for /model name, "picker").
func (m *Model) switchModel(name, source string) {
	if err := m.sess.SetModelFrom(name, source); err != nil {
		m.chat.note(entryError, err.Error())
		return
	}
	m.model = name
	m.chat.note(entryNote, "model set to "+name+" from the next request")
}

// listing is /tasks, /team or /cost.
func (m *Model) listing(what string) string {
	var b strings.Builder
	switch what {
	case "tasks":
		b.WriteString(listTasks(m.tree.rows, &m.tasks))
	case "team":
		b.WriteString("Team:")
		n := 0
		for _, a := range m.tree.rows {
			if a.Kind == "teammate" {
				fmt.Fprintf(&b, "\n  %s@%s  %-9s %s %s", a.Name, a.Team, a.State, a.Type, a.Model)
				n++
			}
		}
		if n == 0 {
			b.WriteString(" no teammates in this session (ask for a team; its members show here)")
		}
	case "cost":
		b.WriteString("Cost:")
		for _, a := range m.tree.entries {
			if a.Workflow == nil {
				fmt.Fprintf(&b, "\n  %-30s %s  ↑%s ↓%s", clip.Runes(agentLabel(a), 30), cost(a.CostUSD), tokens(a.Usage.TotalInput()), tokens(a.Usage.OutputTokens))
			}
		}
		fmt.Fprintf(&b, "\n  %-30s %s", "total", cost(m.tree.total.cost))
	}
	return b.String()
}

// background runs f on a goroutine the model owns and delivers its
// message.
func (m *Model) background(f func(ctx context.Context) tea.Msg) tea.Cmd {
	m.wg.Add(1)
	ctx := m.life
	return func() tea.Msg {
		defer m.wg.Done()
		return f(ctx)
	}
}

type sessionsMsg struct {
	list []cohort.SessionSummary
	err  error
}

type resumedMsg struct {
	sess Session
	id   string
	err  error
}

func (m *Model) listSessions() tea.Cmd {
	if m.opts.Sessions == nil || m.opts.Resume == nil {
		m.chat.note(entryError, "resume is not available here")
		return nil
	}
	list := m.opts.Sessions
	return m.background(func(ctx context.Context) tea.Msg {
		l, err := list(ctx)
		return sessionsMsg{l, err}
	})
}

// pickSession shows the /resume picker.
func (m *Model) pickSession(msg sessionsMsg) {
	if msg.err != nil {
		m.chat.note(entryError, msg.err.Error())
		return
	}
	list := slices.DeleteFunc(msg.list, func(s cohort.SessionSummary) bool { return s.ID == m.sess.ID() })
	var items []string
	for _, s := range list {
		items = append(items, fmt.Sprintf("%s  %s  %s  %s", s.ID[:min(8, len(s.ID))], s.Updated.Local().Format("Jan 02 15:04"),
			cost(s.CostUSD), Clean(clip.Runes(s.FirstPrompt, 80), false)))
	}
	m.dialog = &pickerDialog{title: "Resume a session (enter, esc)", items: items, pick: func(i int) {
		if m.running {
			m.chat.note(entryError, "a turn is running: interrupt it first (esc)")
			return
		}
		id, resume := list[i].ID, m.opts.Resume
		cmd := m.background(func(ctx context.Context) tea.Msg {
			s, err := resume(ctx, id)
			return resumedMsg{s, id, err}
		})
		m.pendingCmd = cmd
	}}
}

func (m *Model) resumed(msg resumedMsg) {
	if msg.err != nil {
		m.chat.note(entryError, "resume: "+msg.err.Error())
		return
	}
	old := m.sess
	m.sess = msg.sess
	m.gen++ // events of the old session's Run, if any, are dropped
	m.running = false
	m.chat, m.agents, m.queue = newTranscript(), map[string]*transcript{}, nil
	m.tree.forget()
	m.tasks.forget()
	if err := old.Close(); err != nil {
		m.chat.note(entryError, err.Error())
	}
	m.chat.note(entryNote, "resumed session "+msg.id)
	m.refresh()
}

// shellDone is a finished ! command.
type shellDone struct {
	cmd, out string
	err      bool
}

// shell runs a ! command in the project directory, its output (the last
// 64 KB) shown as a tool result.
func (m *Model) shell(cmd string) tea.Cmd {
	if cmd == "" {
		return nil
	}
	dir := m.opts.Dir
	return m.background(func(ctx context.Context) tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
		c.Dir, c.WaitDelay = dir, time.Second
		out, err := c.CombinedOutput()
		if len(out) > maxEntryText {
			out = out[len(out)-maxEntryText:]
		}
		s := string(out)
		if err != nil {
			s += "\n" + err.Error()
		}
		return shellDone{cmd: cmd, out: s, err: err != nil}
	})
}

// userCommands are the project's custom commands a built-in name does
// not shadow, for /help and the dispatch.
func userCommands(dir string) []slashcmd.Command {
	return slices.DeleteFunc(slashcmd.Load(dir), func(c slashcmd.Command) bool {
		return slices.ContainsFunc(builtins, func(b struct{ name, help string }) bool { return b.name == c.Name })
	})
}

// commandHelp is a custom command's line in /help.
func commandHelp(c slashcmd.Command) string {
	desc := c.Description
	if desc == "" {
		desc = clip.Runes(firstLine(c.Body), 60)
	}
	return Clean(desc, false)
}
