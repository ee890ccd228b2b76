package safegit

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// includes reports whether the repository's own config files mention
// include.path or includeIf (a plain search: a false positive only costs
// one more git call).
func includes(repo gitrepo.Layout) bool {
	for _, f := range configFiles(repo) {
		data, err := ownread.Config(f, 0)
		if err == nil && strings.Contains(strings.ToLower(string(data)), "include") {
			return true
		}
		var refused *ownread.Refused
		if errors.As(err, &refused) {
			return true // cannot say: git's own reading of it decides
		}
	}
	return false
}

func configFiles(repo gitrepo.Layout) []string {
	files := []string{filepath.Join(repo.CommonDir, "config"), filepath.Join(repo.GitDir, "config.worktree")}
	if repo.CommonDir != repo.GitDir {
		files = append(files, filepath.Join(repo.CommonDir, "config.worktree"))
	}
	return files
}

// driverKey matches the settings through which a config file makes git
// run a program it names.
var driverKey = lazyre.New(`^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|pager\..+)$`)

// includedDrivers lists -c settings that turn off every driver defined in
// a file the repository's config includes: the effective config is read
// with its origins (which runs no program), and a driver whose origin is
// neither the system or global config nor one of the repository's own
// files is emptied (a filter is also no longer required).
func (r *Runner) includedDrivers(ctx context.Context, path string, repo gitrepo.Layout) ([]string, error) {
	out, err := r.Run(ctx, Cmd{Repo: repo, Dir: repo.GitDir, Args: []string{"config", "--list", "--show-origin", "--show-scope", "-z"}, listing: true})
	if err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, f := range configFiles(repo) {
		own[f] = true
	}
	var off []string
	// Records: scope NUL origin NUL key NEWLINE value NUL.
	fields := strings.Split(out, "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		scope, origin, kv := fields[i], fields[i+1], fields[i+2]
		key, _, _ := strings.Cut(kv, "\n")
		key = strings.ToLower(key)
		if !driverKey.MatchString(key) {
			continue
		}
		file, isFile := strings.CutPrefix(origin, "file:")
		if scope == "system" || scope == "global" || (isFile && own[resolve(file, repo.GitDir)]) {
			continue
		}
		off = append(off, key+"=")
		if strings.HasPrefix(key, "filter.") {
			off = append(off, key[:strings.LastIndex(key, ".")]+".required=false")
		}
	}
	return off, nil
}

func resolve(p, base string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
