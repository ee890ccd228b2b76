package checkpoint

import "path/filepath"

// Rewind is a person's request to rewind a session's files.
type Rewind struct {
	// Session is the session's id; "" means the project's latest session
	// with checkpoints.
	Session string
	// Turn is the user turn of the lead to go back to before (1 is the
	// first prompt); 0 lists the turns.
	Turn int
	// Mode is what goes back: "code" (the files; "" means code),
	// "conversation" (the lead's conversation) or "both". The
	// conversation goes back to the place its Before checkpoint recorded,
	// in the running session or, with none running, in its transcript
	// (the next resume starts there).
	Mode string
	// DryRun reports what would change and changes nothing.
	DryRun bool
	// Force overwrites files changed after the checkpoint outside any
	// agent; Protected writes protected paths and the index; MoveBranch
	// moves a branch that gained commits back (Options).
	Force, Protected, MoveBranch bool
}

// Options are the request's permissions for Apply.
func (r Rewind) Options() Options {
	return Options{Force: r.Force, Protected: r.Protected, MoveBranch: r.MoveBranch}
}

// Report is what a rewind would do or did, paths absolute.
type Report struct {
	Session string
	Turn    int
	// Turns lists the session's turns (a request for turn 0).
	Turns []Record
	// Write are the files restored from the checkpoint, Delete those it
	// lacks; UserEdited, Protected and NotRestorable are as in RootPlan.
	Write, Delete, UserEdited, Protected, NotRestorable []string
	// Index lists the repositories whose index gained staged changes.
	Index []string
	// Branches gained commits after the checkpoint.
	Branches []BranchMove
	// Problems are what cannot be restored, each saying why.
	Problems []string
	// Done is what the rewind did; nil on a dry run.
	Done *Result
	// Conversation is set when the lead's conversation went back too.
	Conversation bool
}

// Files and Conversation say what the request's Mode rewinds.
func (r Rewind) Files() bool        { return r.Mode != "conversation" }
func (r Rewind) Conversation() bool { return r.Mode == "conversation" || r.Mode == "both" }

// Report is the plan for a person to read.
func (p *Plan) Report() *Report {
	r := &Report{Session: p.Session, Turn: p.Turn, Problems: p.Problems}
	for _, rp := range p.Roots {
		join := func(paths []string) []string {
			out := make([]string, len(paths))
			for i, x := range paths {
				out[i] = filepath.Join(rp.Dir, filepath.FromSlash(x))
			}
			return out
		}
		r.Write = append(r.Write, join(rp.Write)...)
		r.Delete = append(r.Delete, join(rp.Delete)...)
		r.UserEdited = append(r.UserEdited, join(rp.UserEdited)...)
		r.Protected = append(r.Protected, join(rp.Protected)...)
		r.NotRestorable = append(r.NotRestorable, rp.NotRestorable...)
		if rp.Index {
			r.Index = append(r.Index, rp.Dir)
		}
		if rp.Branch != nil {
			r.Branches = append(r.Branches, *rp.Branch)
		}
	}
	return r
}
