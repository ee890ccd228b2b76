package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/permission"
)

// Rewinding is the phase of the checkpoint a rewind takes of the tree as
// it is (so a rewind can itself be undone).
const Rewinding Phase = "rewind"

// Request asks for a rewind of a session's files to before one of its
// turns.
type Request struct {
	Session, Project string
	// Turn is the user turn of the lead to go back to before (1 is the
	// first prompt).
	Turn int
	// Roots are the directories as they are now: those the checkpoint
	// covers are taken from it; others (worktrees made since) need Base.
	Roots []Root
	// Unseen reports the paths (absolute) a Read deny rule covers. The
	// session's checkpoints are taken where its commands run, which never
	// see them, so a checkpoint records them as absent; a rewind leaves
	// them as they are rather than delete what no agent touched. Nil:
	// none.
	Unseen func(path string) bool
}

// Plan is what a rewind would do; Apply does it.
type Plan struct {
	Session string
	Turn    int
	Target  *Checkpoint
	// Now is the checkpoint of the tree as it was when the plan was made.
	Now   *Checkpoint
	Roots []RootPlan
	// Problems are what the rewind cannot do, each saying why.
	Problems []string
}

// RootPlan is the rewind of one root.
type RootPlan struct {
	Dir string
	// Write are the paths restored from the checkpoint, Delete those the
	// checkpoint lacks.
	Write, Delete []string
	// UserEdited are paths of Write and Delete changed after the
	// checkpoint outside any agent's turn: written only with Force.
	UserEdited []string
	// Protected are paths of Write and Delete that only a person may
	// allow (settings, hooks, .mcp.json, git files): written only when
	// asked for.
	Protected []string
	// NotRestorable are files over the size limit that differ from what
	// the checkpoint recorded of them.
	NotRestorable []string
	// Index is set when the repository's index holds other entries than
	// at the checkpoint (something was staged): restored only when asked.
	Index bool
	// Branch is set when commits were made on the checked-out branch.
	Branch *BranchMove

	unseen int    // changes left alone: Request.Unseen
	tree   string // what to restore from
	target *RootState
	state  *RootState // now
}

// BranchMove is a branch that gained commits after the checkpoint.
type BranchMove struct {
	Ref, From, To string
	// Commits are the new commits, one line each ("abc1234 subject").
	Commits []string
	// Diverged: the checkpoint's commit is not an ancestor of the branch.
	Diverged bool
}

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool {
	for _, r := range p.Roots {
		if len(r.Write)+len(r.Delete) > 0 || r.Index || r.Branch != nil {
			return false
		}
	}
	return true
}

// Target returns the record of the checkpoint before turn: the latest one
// when a conversation rewind made the turn twice.
func (s *Store) Target(session string, turn int) (Record, error) {
	recs, err := s.Records(session)
	if err != nil {
		return Record{}, err
	}
	var turns []string
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Phase == Before && recs[i].Turn == turn {
			return recs[i], nil
		}
	}
	for _, r := range recs {
		if r.Phase == Before {
			turns = append(turns, fmt.Sprint(r.Turn))
		}
	}
	if len(turns) == 0 {
		return Record{}, fmt.Errorf("session %s: %w", session, ErrNoCheckpoints)
	}
	return Record{}, fmt.Errorf("session %s has no checkpoint before turn %d; it has checkpoints before turns %s", session, turn, strings.Join(slices.Compact(turns), ", "))
}

// Plan works out a rewind without changing any file of the user's: it
// loads and verifies the checkpoint, takes a checkpoint of the tree as it
// is, and compares them.
func (s *Store) Plan(ctx context.Context, req Request) (*Plan, error) {
	rec, err := s.Target(req.Session, req.Turn)
	if err != nil {
		return nil, err
	}
	target, err := s.Load(ctx, req.Session, rec)
	if err != nil {
		return nil, fmt.Errorf("%w; %s", err, s.intactTurns(ctx, req.Session, req.Turn))
	}
	p := &Plan{Session: req.Session, Turn: req.Turn, Target: target}
	unseen := s.unseen(req.Session, req.Unseen, p)
	roots, bases := s.planRoots(target, req.Roots, p)
	p.Now, err = s.Snapshot(ctx, req.Session, req.Project, Record{Turn: req.Turn, Phase: Rewinding}, roots)
	if err != nil {
		return nil, err
	}
	edited := s.userEdits(ctx, req.Session, rec.Seq, p)
	for i := range p.Now.Roots {
		now := &p.Now.Roots[i]
		rp := RootPlan{Dir: now.Dir, state: now, target: target.Root(now.Dir), tree: bases[now.Dir]}
		if rp.target != nil {
			rp.tree = rp.target.Tree
		}
		if err := s.planRoot(ctx, &rp, edited[now.Dir], unseen); err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("%s: %v; nothing there is restored", now.Dir, err))
			continue
		}
		if rp.unseen > 0 {
			p.Problems = append(p.Problems, fmt.Sprintf("%s: %d files a Read deny rule covers are left as they are (the checkpoints never see them)", now.Dir, rp.unseen))
		}
		p.Roots = append(p.Roots, rp)
	}
	return p, nil
}

// intactTurns says which of the session's other turns can still be
// rewound to: those whose Before checkpoint's ref holds the commit Cohort
// recorded (one git call for them all).
func (s *Store) intactTurns(ctx context.Context, session string, except int) string {
	recs, err := s.Records(session)
	if err != nil {
		return "the session's other checkpoints cannot be listed: " + err.Error()
	}
	out, err := s.storeGit(ctx, nil, nil, "for-each-ref", "--format=%(refname) %(objectname)", "refs/cohort/"+session+"/")
	if err != nil {
		return "the store's refs cannot be listed: " + err.Error()
	}
	refs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, id, ok := strings.Cut(line, " "); ok {
			refs[name] = id
		}
	}
	var turns []string
	for _, r := range recs {
		t := fmt.Sprint(r.Turn)
		if r.Phase == Before && r.Turn != except && refs[r.Ref(session)] == r.Commit && !slices.Contains(turns, t) {
			turns = append(turns, t)
		}
	}
	if len(turns) == 0 {
		return "no other checkpoint of the session is intact"
	}
	return "the session's checkpoints still intact are before turns " + strings.Join(turns, ", ") + " (rewind to one of them instead)"
}

// unseen is what the rewind leaves alone: what also (the rules in force
// at the rewind) reports, and what the session's checkpoints recorded
// they left out (Record.Unseen), however long ago and by whatever
// process. A record that cannot be rebuilt leaves every file alone.
func (s *Store) unseen(session string, also func(string) bool, p *Plan) func(string) bool {
	recs, _ := s.Records(session)
	var checkers []*permission.Checker
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Unseen == nil {
			continue
		}
		key, _ := json.Marshal(r.Unseen)
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		c, err := r.Unseen.Checker()
		if err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("the checkpoint of turn %d recorded what it left out in a form that cannot be read (%v): no file is restored or deleted", r.Turn, err))
			return func(string) bool { return true }
		}
		checkers = append(checkers, c)
	}
	return func(path string) bool {
		if also != nil && also(path) {
			return true
		}
		for _, c := range checkers {
			if c.DeniedRead("", path) {
				return true
			}
		}
		return false
	}
}

// planRoots are the roots to compare: the checkpoint's, and those of now
// that it lacks and that have a base (worktrees made since), with the
// trees of their bases.
func (s *Store) planRoots(target *Checkpoint, now []Root, p *Plan) ([]Root, map[string]string) {
	var roots []Root
	bases := map[string]string{}
	for _, r := range target.Roots {
		roots = append(roots, Root{Dir: r.Dir, Repo: r.layout()})
	}
	for _, r := range now {
		dir := filepath.Clean(r.Dir)
		switch {
		case target.Root(dir) != nil:
		case r.Base == "":
			p.Problems = append(p.Problems, fmt.Sprintf("%s: not covered by the checkpoint before turn %d, and not a worktree made since; left as it is", dir, target.Turn))
		default:
			roots = append(roots, Root{Dir: dir, Repo: r.Repo})
			bases[dir] = r.Base + "^{tree}"
		}
	}
	return roots, bases
}

// userEdits are, by root, the paths changed between the end of one of the
// session's turns and the start of the next (or the rewind), from the
// checkpoint after seq on: edits no agent's turn made.
func (s *Store) userEdits(ctx context.Context, session string, seq int, p *Plan) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	recs, _ := s.Records(session)
	var prev *Checkpoint
	for _, r := range recs {
		if r.Seq <= seq {
			continue
		}
		if r.Seq == p.Now.Seq {
			break
		}
		cp, err := s.Load(ctx, session, r)
		if err != nil {
			p.Problems = append(p.Problems, fmt.Sprintf("edits made between turns cannot be told from the agents' around turn %d: %v", r.Turn, err))
			prev = nil
			continue
		}
		switch cp.Phase {
		case Before:
			if prev != nil {
				s.addEdits(ctx, out, prev, cp)
			}
			prev = nil
		case After:
			prev = cp
		}
		// A rewind's own checkpoint (a dry run's too) changes nothing.
	}
	if prev != nil {
		s.addEdits(ctx, out, prev, p.Now)
	}
	return out
}

// addEdits adds the paths that differ between two checkpoints, root by
// root.
func (s *Store) addEdits(ctx context.Context, out map[string]map[string]bool, from, to *Checkpoint) {
	for _, a := range from.Roots {
		b := to.Root(a.Dir)
		if b == nil || a.Tree == b.Tree {
			continue
		}
		changes, err := s.diffTrees(ctx, alternates(&a), a.Tree, b.Tree)
		if err != nil {
			continue
		}
		if out[a.Dir] == nil {
			out[a.Dir] = map[string]bool{}
		}
		for _, c := range changes {
			out[a.Dir][c.path] = true
		}
	}
}

// alternates are the object stores a root's trees refer to besides the
// store's own.
func alternates(roots ...*RootState) []string {
	var out []string
	for _, r := range roots {
		if r != nil && r.CommonDir != "" {
			out = append(out, filepath.Join(r.CommonDir, "objects"))
		}
	}
	return slices.Compact(out)
}

// change is one path of a tree comparison: in the checkpoint (from) or
// not, now (to) or not.
type change struct {
	path         string
	inFrom, inTo bool
	fromMode     string
}

// diffTrees compares two trees of the store (or a repository's).
func (s *Store) diffTrees(ctx context.Context, alts []string, from, to string) ([]change, error) {
	out, err := s.storeGit(ctx, alts, nil, "diff-tree", "-r", "-z", "--no-renames", "--raw", from, to)
	if err != nil {
		return nil, err
	}
	var changes []change
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 {
			return nil, fmt.Errorf("git diff-tree: unexpected line %q", fields[i])
		}
		if meta[0] == "160000" || meta[1] == "160000" {
			continue // a submodule's commit: not restored
		}
		changes = append(changes, change{path: fields[i+1], inFrom: meta[0] != "000000", inTo: meta[1] != "000000", fromMode: meta[0]})
	}
	return changes, nil
}

// planRoot fills rp from the comparison of its checkpoint with now.
func (s *Store) planRoot(ctx context.Context, rp *RootPlan, edited map[string]bool, unseen func(string) bool) error {
	now := rp.state
	changes, err := s.diffTrees(ctx, alternates(now), rp.tree, now.Tree)
	if err != nil {
		return fmt.Errorf("the checkpoint's tree cannot be read (%w)", err)
	}
	large := map[string]bool{}
	if rp.target != nil {
		for _, l := range rp.target.Large {
			large[l.Path] = true
			if !slices.Contains(now.Large, l) {
				rp.NotRestorable = append(rp.NotRestorable, fmt.Sprintf("%s (%d bytes, over the size limit: recorded by hash only)", l.Path, l.Size))
			}
		}
	}
	for _, c := range changes {
		if large[c.path] {
			continue
		}
		if unseen != nil && unseen(filepath.Join(now.Dir, c.path)) {
			rp.unseen++
			continue
		}
		if c.inFrom {
			rp.Write = append(rp.Write, c.path)
		} else {
			rp.Delete = append(rp.Delete, c.path)
		}
	}
	for _, l := range now.Large {
		if !large[l.Path] && !s.inTree(ctx, now, rp.tree, l.Path) {
			rp.Delete = append(rp.Delete, l.Path) // made since, over the limit
		}
	}
	for _, p := range slices.Concat(rp.Write, rp.Delete) {
		if edited[p] {
			rp.UserEdited = append(rp.UserEdited, p)
		}
		if permission.ProtectedPath(p) || permission.ProtectedPath(strings.ToLower(p)) {
			rp.Protected = append(rp.Protected, p)
		}
	}
	if rp.target != nil && rp.target.GitDir != "" {
		if rp.Index, err = s.indexChanged(ctx, rp.target, now); err != nil {
			return err
		}
		rp.Branch = s.branchMove(ctx, rp.target, now)
	}
	return nil
}

// inTree reports whether tree holds path.
func (s *Store) inTree(ctx context.Context, st *RootState, tree, path string) bool {
	out, err := s.storeGit(ctx, alternates(st), nil, "ls-tree", "-z", "--name-only", tree, "--", path)
	return err == nil && out != ""
}

// indexChanged reports whether the repository's index holds other entries
// than at the checkpoint (its bytes may differ only in cached stat data).
func (s *Store) indexChanged(ctx context.Context, target, now *RootState) (bool, error) {
	if target.Index == now.Index {
		return false, nil
	}
	if target.Index == "" && len(target.Problems) > 0 {
		return false, nil // not recorded (the checkpoint says why): nothing to restore
	}
	if target.Index == "" || now.Index == "" {
		return true, nil
	}
	entries := func(blob string) (string, error) {
		data, err := s.storeGit(ctx, nil, nil, "cat-file", "blob", blob)
		if err != nil {
			return "", fmt.Errorf("the index recorded as %s cannot be read (%w)", blob, err)
		}
		tmp, cleanup, err := s.tempFile([]byte(data))
		if err != nil {
			return "", err
		}
		defer cleanup()
		return s.git.Run(ctx, safegit.Cmd{Repo: target.layout(), Index: tmp, Args: []string{"ls-files", "-s", "-z"}})
	}
	a, err := entries(target.Index)
	if err != nil {
		return false, err
	}
	b, err := entries(now.Index)
	return a != b, err
}

// branchMove is the checked-out branch's commits made since the
// checkpoint, or nil.
func (s *Store) branchMove(ctx context.Context, target, now *RootState) *BranchMove {
	if target.Head == nil || now.Head == nil || target.Head.Ref == "" || target.Head.Ref != now.Head.Ref || target.Head.Commit == now.Head.Commit {
		return nil
	}
	m := &BranchMove{Ref: now.Head.Ref, From: now.Head.Commit, To: target.Head.Commit}
	run := func(args ...string) (string, error) {
		return s.git.Run(ctx, safegit.Cmd{Repo: now.layout(), Args: args})
	}
	if _, err := run("merge-base", "--is-ancestor", m.To, m.From); err != nil {
		m.Diverged = true
	}
	if out, err := run("log", "--format=%h %s", m.To+".."+m.From); err == nil {
		m.Commits = strings.Split(strings.TrimSpace(out), "\n")
	}
	return m
}

// ErrNeedsForce: the rewind would overwrite what the user changed.
var ErrNeedsForce = errors.New("the rewind would overwrite files changed after the checkpoint outside any agent")
