package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// Checkpoints record and restore a file's bytes as they are, with no
// conversion. Git converts what it hashes and checks out as the work
// tree's .gitattributes say (line endings, working-tree-encoding, ident,
// filter drivers), and those files are the model's to write: one line
// (`* working-tree-encoding=UTF-16`) made every snapshot fail ("BOM is
// required") and with it every rewind (attack9's o9-rewind-gitattributes),
// and a conversion that does not round-trip (mixed line endings under
// text=auto) would restore other bytes than were there. So every git
// call that reads or writes contents (update-index, write-tree, read-tree,
// checkout-index) runs with a common git dir of the store's whose
// info/attributes, which outrank every .gitattributes, turn all of them
// off. Its config names only the repository's object format; the
// repository's own git dir (its index's shared files) stays GIT_DIR, and
// the calls that list files by git's ignore rules (ls-files) keep the
// repository's common dir, whose info/exclude those rules read.
// Checkpoints taken before this was so hold converted contents, which
// are now restored as stored.

// The object format of each repository (by common dir) and the raw dirs
// already written are remembered for the store's life (Store.raw): a
// content call runs up to four times a root a turn, and the files these
// come from are not the model's to change (the repository's config is a
// protected path; the raw dirs are the store's, under Cohort's home).

// rawAttributes turns off every conversion of contents.
const rawAttributes = "* -text -eol -crlf -working-tree-encoding -ident -filter\n"

var sha256Format = regexp.MustCompile(`(?im)^\s*objectformat\s*=\s*sha256\s*$`)

// contentCmd is rootCmd for a call that reads or writes file contents:
// with no conversion (see above).
func (s *Store) contentCmd(st *RootState, index string, args ...string) (safegit.Cmd, error) {
	c := s.rootCmd(st, index, args...)
	if st.GitDir == "" {
		return c, s.rawInfo(s.gitDir)
	}
	format := s.objectFormat(st.CommonDir)
	common := filepath.Join(s.dir, "raw", format)
	if err := s.rawCommon(common, format); err != nil {
		return c, err
	}
	c.Repo = gitrepo.Layout{WorkTree: st.Dir, GitDir: st.GitDir, CommonDir: common}
	return c, nil
}

// objectFormat is the object format of the repository whose common git
// dir is common, read from its config once (remembered in s.raw).
func (s *Store) objectFormat(common string) string {
	key := "format:" + common
	if f, ok := s.raw.Load(key); ok {
		return f.(string)
	}
	format := "sha1"
	if data, err := ownread.Config(filepath.Join(common, "config"), 0); err == nil && sha256Format.Match(data) {
		format = "sha256"
	}
	s.raw.Store(key, format)
	return format
}

// rawInfo writes gitDir's info/attributes unless it is there (checked
// once a store: s.raw remembers it).
func (s *Store) rawInfo(gitDir string) error {
	key := "info:" + gitDir
	if _, ok := s.raw.Load(key); ok {
		return nil
	}
	if err := s.writeRawInfo(gitDir); err != nil {
		return err
	}
	s.raw.Store(key, true)
	return nil
}

func (s *Store) writeRawInfo(gitDir string) error {
	path := filepath.Join(gitDir, "info", "attributes")
	if data, err := os.ReadFile(path); err == nil && string(data) == rawAttributes {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	return writeAtomic(path, []byte(rawAttributes))
}

// rawCommon makes the common git dir the content calls of repositories
// of one object format use: config, an empty refs/ (git asks for one) and
// the attributes (checked once a store: s.raw remembers it).
func (s *Store) rawCommon(dir, format string) error {
	key := "common:" + dir
	if _, ok := s.raw.Load(key); ok {
		return nil
	}
	if err := s.writeRawCommon(dir, format); err != nil {
		return err
	}
	s.raw.Store(key, true)
	return nil
}

func (s *Store) writeRawCommon(dir, format string) error {
	config := "[core]\n\trepositoryformatversion = 0\n"
	if format == "sha256" {
		config = "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n"
	}
	if data, err := os.ReadFile(filepath.Join(dir, "config")); err != nil || string(data) != config {
		if err := os.MkdirAll(filepath.Join(dir, "refs"), 0o700); err != nil {
			return fmt.Errorf("checkpoint store: %w", err)
		}
		if err := writeAtomic(filepath.Join(dir, "config"), []byte(config)); err != nil {
			return err
		}
	}
	return s.rawInfo(dir)
}

// writeAtomic writes path through a temporary file beside it.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return fmt.Errorf("checkpoint store: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("checkpoint store: %w", werr)
	}
	return nil
}
