package assemble

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
)

// switchHookWait bounds the model switch hooks together (each has its own
// timeout too): SetModel has no context of its own.
const switchHookWait = 2 * time.Minute

// cacheTTL is how long a prompt cache stays warm after a response: the
// API's default cache lifetime, which Cohort's requests use.
const cacheTTL = 5 * time.Minute

// SetModel switches the session's own agent to model (an alias resolves)
// from its next request on; source is who asked (hook.SwitchSDK,
// SwitchCommand, SwitchPicker). PreModelSwitch hooks may refuse the switch
// (the error says why); PostModelSwitch hooks hear of it afterwards.
func (s *Session) SetModel(model, source string) error {
	if !slices.Contains(hook.SwitchSources, source) {
		return fmt.Errorf("cohort: SetModel: unknown source %q (use one of %s)", source, strings.Join(hook.SwitchSources, ", "))
	}
	lead := s.MainAgent()
	scope := s.hookScope(lead)
	ctx, cancel := context.WithTimeout(context.Background(), switchHookWait)
	defer cancel()
	sw := s.modelSwitch(model, agentdef.ResolveAlias(model, s.model.aliases))
	sw.Source = source
	pre := scope.PreModelSwitch(ctx, sw)
	s.hookMessages(pre)
	if pre.Block || pre.Stop {
		return refused("a PreModelSwitch hook refused the switch to %s: %s", sw.To, firstNonEmpty(pre.Reason, pre.StopReason))
	}
	lead.SetModel(sw.To)
	s.hookMessages(scope.PostModelSwitch(ctx, sw))
	return nil
}

// modelSwitch estimates what a switch of the lead from its model to to
// costs, as Claude Code's model switch hooks are told: the context the
// next request re-sends, whether the cache is still warm, and the price
// of writing that context to the new model's cache.
func (s *Session) modelSwitch(requested, to string) hook.ModelSwitch {
	lead := s.MainAgent()
	sw := hook.ModelSwitch{From: lead.Info().Model, To: to, Requested: requested, Source: hook.SwitchSDK,
		CacheTTL: "5m"}
	if e := lead.Engine(); e != nil {
		sw.ContextTokens = e.ContextUsage().LastInput
	}
	busy, ended := s.usage.leadState()
	sw.CacheWarm = sw.ContextTokens > 0 && (busy || time.Since(ended) < cacheTTL)
	price, pricing := switchPrice(s.model.prices, to)
	sw.Pricing = pricing
	sw.EstimatedUSD = price.Cost(llm.Usage{CacheCreationInputTokens: sw.ContextTokens})
	return sw
}

// switchPrice is to's price and where it came from: "catalog" for the
// built-in list prices, "configured" when the settings' "prices" set it,
// "default" when neither knows the model (the Sonnet tier is assumed).
func switchPrice(table llm.PriceTable, to string) (llm.Price, string) {
	p, ok := table.Lookup(to)
	switch listed, known := llm.DefaultPrices.Lookup(to); {
	case !ok:
		return llm.DefaultPrices["claude-sonnet"], "default"
	case known && listed == p:
		return p, "catalog"
	}
	return p, "configured"
}

// reopened fires, after the lead's conversation was compacted (its memory
// opens it again, ahead of the summary), the SessionStart hooks with
// source "compact" and InstructionsLoaded for each memory file with load
// reason "compact", as Claude Code 2.1.332 does; what SessionStart adds
// comes back for the model, behind the summary. Other agents fire none.
func (s *Session) reopened(ctx context.Context, a *crew.Agent, _ string) []llm.Block {
	if a.Info().Depth != 0 {
		return nil
	}
	scope := s.hookScope(a)
	start := scope.SessionStart(ctx, hook.SourceCompact, a.Info().Model)
	s.hookMessages(start)
	if len(a.Opening()) > 0 {
		s.instructionsLoaded(ctx, scope, hook.LoadCompact)
	}
	if b := hookContextBlock(start.Context); b != nil {
		return []llm.Block{*b}
	}
	return nil
}

// instructionsLoaded fires the lead's InstructionsLoaded hooks for each
// memory file read into the conversation's opening, with why it was read.
func (s *Session) instructionsLoaded(ctx context.Context, scope *hook.Scope, reason string) {
	for _, f := range s.memoryFiles {
		typ := hook.MemoryProject
		if f.Scope == "user" {
			typ = hook.MemoryUser
		}
		s.hookMessages(scope.InstructionsLoaded(ctx, hook.MemoryFile{Path: f.Path, Type: typ, Reason: reason}))
	}
}
