package mcp

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

const reviewSkill = "---\nname: review\ndescription: Reviews a change for bugs.\nallowed-tools: Read, Grep\n---\nCheck every error path. Use checklist.md beside this file.\n"

// TestSkillInvoked: a skill in .claude/skills is listed in the Skill
// tool's description; the scripted model calls it and reads the
// instructions and the skill's directory. Broken SKILL.md files are
// skipped with their file and line.
func TestSkillInvoked(t *testing.T) {
	t.Parallel()
	c, rs := clitest.NewConv(), &results{}
	h := clitest.New(t, c.Policy)
	h.Write(".claude/skills/review/SKILL.md", reviewSkill)
	h.Write(".claude/skills/plain/SKILL.md", "no frontmatter here\n")
	h.Write(".claude/skills/shouty/SKILL.md", "---\nname: Shouty_Name\ndescription: x\n---\nbody\n")
	var desc string
	c.On("review my change", func(r *fakeapi.Request) fakeapi.Reply {
		for _, tl := range r.Tools {
			if tl.Name == "Skill" {
				desc = tl.Description
			}
		}
		return clitest.Calls(clitest.Use("Skill", map[string]any{"skill": "review"}))(r)
	}, rs.record("skill", clitest.Text("reviewed")))
	out, errOut, code := h.Run("-p", "review my change")
	if code != 0 || strings.TrimSpace(out) != "reviewed" {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if !strings.Contains(desc, "- review: Reviews a change for bugs.") || strings.Contains(desc, "Shouty") {
		t.Errorf("Skill description = %q", desc)
	}
	got := rs.of("skill")
	for _, want := range []string{"Check every error path", ".claude/skills/review", "Tools it expects: Read, Grep"} {
		if !strings.Contains(got, want) {
			t.Errorf("Skill result %q lacks %q", got, want)
		}
	}
	for _, want := range []string{"plain/SKILL.md:1: no YAML frontmatter", `shouty/SKILL.md:2: name "Shouty_Name" is not a skill name`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestSkillPreloaded: a definition's skills: puts the skill's instructions
// in the agent's first message.
func TestSkillPreloaded(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	h.Write(".claude/skills/review/SKILL.md", reviewSkill)
	h.Write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: reviews\nskills: [review]\n---\nYou review.")
	var first string
	c.On("delegate review", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "review", "prompt": "sub: review it", "subagent_type": "reviewer"})), clitest.Text("done"))
	c.On("sub: review it", func(r *fakeapi.Request) fakeapi.Reply {
		first = r.FirstUserText()
		return fakeapi.TextReply("looked")
	})
	if _, errOut, code := h.Run("-p", "delegate review"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(first, `<skill name="review">`) || !strings.Contains(first, "Check every error path") {
		t.Errorf("the agent's first message lacks the skill:\n%s", first)
	}
}
