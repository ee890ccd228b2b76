package cohort

import (
	"fmt"
	"path/filepath"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/skill"
	"github.com/cohort-dev/cohort/tool"
)

// skillDirs are where skills are found, lowest precedence first: the
// user's (~/.claude/skills with Claude compatibility on, then
// $COHORT_HOME/skills), then the project's (.claude/skills, .cohort/skills).
func (b *base) skillDirs() []string {
	var dirs []string
	if b.env.ClaudeCompat && b.env.Home != "" {
		dirs = append(dirs, filepath.Join(b.env.Home, ".claude", "skills"))
	}
	dirs = append(dirs, filepath.Join(b.env.CohortHome, "skills"))
	roots := []string{b.projectRoot}
	if b.cwd != b.projectRoot {
		roots = append(roots, b.cwd)
	}
	for _, r := range roots {
		if b.env.ClaudeCompat {
			dirs = append(dirs, filepath.Join(r, ".claude", "skills"))
		}
		dirs = append(dirs, filepath.Join(r, ".cohort", "skills"))
	}
	return dirs
}

// openSkills loads the session's skills; broken ones are warnings.
func (s *Session) openSkills() {
	cat, errs := skill.Load(s.skillDirs()...)
	for _, err := range errs {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %v\n", err)
	}
	s.skills = cat
}

// skillTools is the Skill tool, when the session has skills.
func (s *Session) skillTools() []tool.Tool {
	if t := s.skills.Tool(); t != nil {
		return []tool.Tool{t}
	}
	return nil
}

// preloadSkills are the blocks of the skills a definition preloads.
func (s *Session) preloadSkills(def *agentdef.Definition) []llm.Block {
	if def == nil || len(def.Skills) == 0 {
		return nil
	}
	blocks, missing := s.skills.Preload(def.Skills)
	for _, n := range missing {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %s: agent %q preloads skill %q, which is not in any skills directory; it starts without it\n", def.Source.Path, def.Name, n)
	}
	return blocks
}
