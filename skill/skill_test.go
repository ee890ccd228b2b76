package skill

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, data, err string
		tools           []string
	}{
		{"list tools", "---\nname: pdf\ndescription: Fills PDF forms.\nallowed-tools: [Read, Bash]\n---\nbody", "", []string{"Read", "Bash"}},
		{"crlf and string tools", "---\r\nname: pdf\r\ndescription: d\r\nallowed-tools: Read, Grep\r\n---\r\nbody", "", []string{"Read", "Grep"}},
		{"no frontmatter", "# pdf\nbody", "SKILL.md:1: no YAML frontmatter", nil},
		{"unclosed", "---\nname: pdf\n", "SKILL.md:1: the frontmatter that starts here has no closing", nil},
		{"bad name", "---\ndescription: d\nname: PDF Tool\n---\n", `SKILL.md:3: name "PDF Tool" is not a skill name`, nil},
		{"no name", "---\ndescription: d\n---\n", "SKILL.md:3: the frontmatter has no name", nil},
		{"no description", "---\nname: pdf\n---\n", "SKILL.md:3: the frontmatter has no description", nil},
		{"bad yaml", "---\nname: [pdf\n---\n", "SKILL.md:", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("/s/pdf/SKILL.md", []byte(tt.data))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasSuffix(err.Error(), "the skill is skipped") {
					t.Fatalf("err = %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != "pdf" || s.Dir != "/s/pdf" || s.Body != "body" || !cmp.Equal(s.AllowedTools, tt.tools) {
				t.Errorf("skill = %+v", s)
			}
		})
	}
}

// TestLoadPrecedence: a later directory's skill replaces an earlier one of
// the same name; the Skill tool lists them in name order.
func TestLoadPrecedence(t *testing.T) {
	user, proj := t.TempDir(), t.TempDir()
	write := func(dir, name, desc string) {
		os.MkdirAll(filepath.Join(dir, name), 0o755)
		os.WriteFile(filepath.Join(dir, name, FileName), []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\nb"), 0o644)
	}
	write(user, "zeta", "user zeta")
	write(user, "alpha", "user alpha")
	write(proj, "alpha", "project alpha")
	c, errs := Load(nil, user, filepath.Join(proj, "missing"), proj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	desc := c.Tool().Def().Description
	if !strings.Contains(desc, "- alpha: project alpha\n- zeta: user zeta") {
		t.Errorf("description = %q", desc)
	}
	blocks, missing := c.Preload([]string{"zeta", "nope"})
	if len(blocks) != 1 || !cmp.Equal(missing, []string{"nope"}) {
		t.Errorf("Preload = %v, %v", blocks, missing)
	}
	if (&Catalog{}).Tool() != nil {
		t.Error("an empty catalog has a Skill tool")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\n---\nc"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("SKILL.md", data)
		if err == nil && (s.Name == "" || s.Description == "") {
			t.Fatalf("accepted a skill without name or description: %+v", s)
		}
	})
}

// A SKILL.md planted as a FIFO does not hang the load, and one that is a
// link to Cohort's own environment is not read: both are errors naming
// the file, and the good skill beside them loads.
func TestLoadRefusesPlantedSkillFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"fifo", "env", "good"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo", FileName), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self/environ", filepath.Join(dir, "env", FileName)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "good", FileName), []byte("---\nname: good\ndescription: fine\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, errs := Load(nil, dir)
	if len(errs) != 2 {
		t.Fatalf("errors %v, want two (the FIFO and the link)", errs)
	}
	for _, err := range errs {
		if !strings.Contains(err.Error(), "/fifo/") && !strings.Contains(err.Error(), "/env/") {
			t.Errorf("error %v names neither planted file", err)
		}
	}
	if all := c.All(); len(all) != 1 || all[0].Name != "good" {
		t.Errorf("skills %v, want good alone", all)
	}
}
