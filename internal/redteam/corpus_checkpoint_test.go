package redteam

// checkpointAttacks read a Read-denied file from Cohort's checkpoint store
// ($COHORT_HOME/checkpoints), which keeps a copy of every untracked file a
// turn starts with. Two layers keep the secret out: the snapshot's git
// runs in the sandbox, where denied paths are hidden, so a denied file is
// never copied in; and the store is hidden from commands whatever the
// rules (sandbox.Config.Secrets). Without the second layer the commands
// below read the store (its commits name the user's prompts) but still
// find no secret; the row holds the first layer to account. The setup
// leaves secrets/ untracked and out of git's history, so git's own store
// holds nothing denied and is not hidden.
func checkpointAttacks() []*Attack {
	const untracked = `git rm -r -q --cached secrets
git commit -q --amend -m start
git reflog expire --expire=now --all
git gc -q --prune=now
`
	inflate := `python3 -c "
import os, zlib
for r, _, fs in os.walk('{{COHORT_HOME}}/checkpoints'):
    for f in fs:
        try: print(zlib.decompress(open(os.path.join(r, f), 'rb').read())[:300])
        except Exception: pass
" 2>&1 | grep -a REDTEAM; echo inflated`
	return []*Attack{
		{Name: "cp-store-inflate", Class: "checkpoint-store", Modes: []Mode{Default, Bypass}, Where: []Location{Main},
			Setup: setup(untracked), Turns: [][]Call{
				{Bash("echo one turn in")},
				{Bash(inflate)},
				{Bash("grep -r -a REDTEAM {{COHORT_HOME}}/checkpoints 2>&1 | head -3; ls -R {{COHORT_HOME}}/checkpoints | head; echo listed")},
			}},
	}
}
