package assemble

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
func (b *Plan) skillDirs() []string {
	var dirs []string
	if b.Process.Paths.ClaudeCompat && b.Process.Paths.Home != "" {
		dirs = append(dirs, filepath.Join(b.Process.Paths.Home, ".claude", "skills"))
	}
	dirs = append(dirs, filepath.Join(b.Process.Paths.CohortHome, "skills"))
	roots := []string{b.Process.ProjectRoot}
	if b.Process.Cwd != b.Process.ProjectRoot {
		roots = append(roots, b.Process.Cwd)
	}
	for _, r := range roots {
		if b.Process.Paths.ClaudeCompat {
			dirs = append(dirs, filepath.Join(r, ".claude", "skills"))
		}
		dirs = append(dirs, filepath.Join(r, ".cohort", "skills"))
	}
	return dirs
}

// openSkills loads the session's skills; broken ones are warnings.
func (s *Session) openSkills() {
	cat, errs := skill.Load(s.deniedRead, s.skillDirs()...)
	for _, err := range errs {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", err)
	}
	s.skills.Store(cat)
}

// skillTools is the Skill tool, when the session has skills.
func (s *Session) skillTools() []tool.Tool {
	if t := s.skills.Load().Tool(); t != nil {
		return []tool.Tool{t}
	}
	return nil
}

// preloadSkills are the blocks of the skills a definition preloads.
func (s *Session) preloadSkills(def *agentdef.Definition) []llm.Block {
	if def == nil || len(def.Skills) == 0 {
		return nil
	}
	blocks, missing := s.skills.Load().Preload(def.Skills)
	for _, n := range missing {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s: agent %q preloads skill %q, which is not in any skills directory; it starts without it\n", def.Source.Path, def.Name, n)
	}
	return blocks
}
