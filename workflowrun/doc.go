// Package workflowrun runs workflow scripts in a session: Start, the one
// way a workflow runs — from the Workflow tool a model calls (Claude Code's
// tool name and input fields: script | name | scriptPath, args,
// resumeFromRunId), which lives here beside the runs it starts, or from
// `cohort workflow run` and `cohort workflow resume` through the Session.
//
// Design decisions the spec leaves open:
//
//   - The script runs in the workflow host process (package workflow/host;
//     this package never links goja). Each agent() call it makes comes
//     back here and is spawned by crew.Spawn with Request.Workflow set:
//     a background agent on the same path as every other (sandbox,
//     permissions in the caller's mode, hooks, worktree isolation, cost
//     accounting), whose task is a child of the run's task and notifies
//     nobody; its final text goes back to the script. A step with
//     isolation: 'remote' goes to crew.SpawnRemote the same way (a NATS
//     worker runs it; its work comes back as a branch). The worker reports
//     tokens, not cost, so the run's budget prices them at the model's
//     uncached rates.
//
//   - A run is a task of kind local_workflow named by its run id (wf and
//     16 hex digits), so TaskStop and TaskOutput take the run id, and
//     stopping it stops its agents. Each start or resume is a task of its
//     own (a resume in the same session must not reuse the id whose
//     output file the first one left). Its Detail (a *Detail) carries the
//     script's meta, the current phase and its agents' counts and cost;
//     Session.Agents shows it as one node that its agents point to.
//
//   - Runs live in the session's directory (Config.Dir/<run id>/: the
//     script as script.js and the journal). The tool answers at once with
//     the run id and the script's path; the <task-notification> at the end
//     carries the script's return value and the cost per phase. Resuming
//     (resumeFromRunId) reruns that run's script.js — the model iterates by
//     editing it — or the script given with it, replaying the journal.
//
//   - A script's meta is checked in the host before anything starts; a
//     meta that is not a pure literal, a script that does not parse or a
//     corrupt journal is the call's is_error result.
//
//   - A scriptPath is a file the call reads, reported to the permission
//     check (permission.Pather), so Read deny rules apply to it as to a
//     Read; the tool refuses a covered path itself too (Env.DeniedRead),
//     since a script that does not load would quote it back.
//
//   - The permission prompt (the tool is not read-only) leads its reason
//     with the script's meta.description and an estimate of what its
//     agents' prompt prefixes cost (tool.PromptDescriber).
package workflowrun
