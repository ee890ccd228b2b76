package remote

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/permission"
)

// PatchPaths lists every path a patch (git format-patch output, one or
// more commits) creates, changes, deletes or renames, both ends of a
// rename included. It asks git itself (git apply --numstat -z), the parser
// that will apply the patch, so what is checked is what would be written.
func PatchPaths(ctx context.Context, g *safegit.Runner, patch []byte) ([]string, error) {
	// Outside any repository: inside one, git apply would skip the paths
	// outside the current directory, and they are the ones to check.
	dir, err := os.MkdirTemp("", "cohort-patch-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(dir)
	if g == nil {
		g = &safegit.Runner{}
	}
	raw, err := g.Run(ctx, safegit.Cmd{Dir: dir, Args: []string{"apply", "--numstat", "-z", "-"}, Stdin: patch})
	if err != nil {
		return nil, fmt.Errorf("the patch does not parse (git apply --numstat): %w", err)
	}
	out := []byte(raw)
	// Each record is "added\tdeleted\tpath\0", or for a rename or copy
	// "added\tdeleted\t\0from\0to\0".
	var paths []string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		if rec == "" {
			continue
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("unexpected git apply --numstat record %q", rec)
		}
		if parts[2] != "" {
			paths = append(paths, parts[2])
			continue
		}
		if i+2 >= len(fields) {
			return nil, fmt.Errorf("truncated rename record in git apply --numstat output")
		}
		paths = append(paths, fields[i+1], fields[i+2])
		i += 2
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// ProtectedFunc reports more protected paths (relative to the repository
// root): the scripts the lead's hooks run.
type ProtectedFunc func(rel string) bool

// CheckPatch returns the paths of patch that the lead must not apply
// without the user: the protected paths of package permission (.git/,
// .claude/, .cohort/settings*, .cohort/agents/), anything else under
// .cohort/ (worktrees, remote patches, the project's Cohort state), and
// what extra reports (hook scripts). None means the patch may be applied.
// An error means it could not be read, which the lead treats the same
// way: kept aside, not applied.
func CheckPatch(ctx context.Context, g *safegit.Runner, patch []byte, extra ProtectedFunc) ([]string, error) {
	paths, err := PatchPaths(ctx, g, patch)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, p := range paths {
		if ProtectedInPatch(p) || (extra != nil && extra(path.Clean(p))) {
			bad = append(bad, p)
		}
	}
	return bad, nil
}

// ProtectedInPatch is the path rule for a patch from a worker: the local
// protected-path rule, plus the whole .cohort/ directory and paths that
// climb out of the repository.
func ProtectedInPatch(p string) bool {
	c := path.Clean(p)
	if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") {
		return true
	}
	// Lower case as well: on a case-insensitive file system .Claude/ is
	// .claude/.
	if permission.ProtectedPath(c) || permission.ProtectedPath(strings.ToLower(c)) {
		return true
	}
	for _, seg := range strings.Split(strings.ToLower(c), "/") {
		if seg == ".cohort" {
			return true
		}
	}
	return false
}
