package agenttool

import (
	"context"
	"strings"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/session"
)

// subagentHooks are the lifecycle hooks of a subagent (hook.Scope has
// them); an engine.Hooks without them runs none.
type subagentHooks interface {
	SubagentStart(ctx context.Context, prompt string) hook.Outcome
	SubagentStop(ctx context.Context, stopHookActive bool) hook.Outcome
}

// maxStopContinues bounds how often SubagentStop hooks may send a subagent
// back to work, so a hook that always blocks cannot loop forever.
const maxStopContinues = 3

// subagentStart fires SubagentStart; context it returns joins the opening
// message.
func subagentStart(ctx context.Context, h engine.Hooks, opening []llm.Block) []llm.Block {
	sh, ok := h.(subagentHooks)
	if !ok || len(opening) == 0 {
		return opening
	}
	out := sh.SubagentStart(ctx, opening[len(opening)-1].Text)
	if len(out.Context) == 0 {
		return opening
	}
	return append(opening, llm.Text("<system-reminder>\n"+strings.Join(out.Context, "\n")+"\n</system-reminder>"))
}

// subagentStop fires SubagentStop when the subagent ends its work; a hook
// that blocks sends it back with the hook's reason (at most
// maxStopContinues times).
func (rt *Runtime) subagentStop(ctx context.Context, h engine.Hooks, eng *engine.Agent, res *engine.Result, err error) (*engine.Result, error) {
	sh, ok := h.(subagentHooks)
	if !ok {
		return res, err
	}
	for i := 0; err == nil && res != nil && res.Stop == engine.StopSuccess && i <= maxStopContinues; i++ {
		out := sh.SubagentStop(ctx, i > 0)
		if !out.Block || out.Stop || i == maxStopContinues {
			return res, err
		}
		next, nerr := eng.Send(ctx, []llm.Block{llm.Text("<system-reminder>\nA SubagentStop hook asks you to continue: " + out.Reason + "\n</system-reminder>")}, session.OriginSystem)
		if next != nil {
			next.Turns += res.Turns
			next.ToolUses += res.ToolUses
			next.Usage = next.Usage.Add(res.Usage)
			res = next
		}
		err = nerr
	}
	return res, err
}
