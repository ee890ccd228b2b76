package remote

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Job is one agent a lead asks a worker to run: everything a machine that
// has never seen the lead's repository needs. It travels inside a signed
// Envelope; DecodeJob reads it strictly, so a field a worker does not know
// (hooks, MCP servers, a sandbox switch) is an error, never ignored.
type Job struct {
	// ID names the job everywhere: the agent id, the task id, the message
	// ids that make its result land once, and the branch its patch comes
	// back on (cohort/remote-<id>).
	ID string `json:"id"`
	// Lead is the name of the key that signed the job; Keyring.Open checks
	// that they match, so a job is bound to the lead that submitted it.
	Lead string `json:"lead"`
	// Session is the lead's session id (for the worker's logs).
	Session string `json:"session,omitempty"`
	// Issued is when the lead signed the job; a worker refuses jobs older
	// than its Keyring's MaxAge, so a captured job cannot be replayed
	// later.
	Issued time.Time `json:"issued"`

	Description string     `json:"description"`
	Prompt      string     `json:"prompt"`
	Definition  Definition `json:"definition"`
	// Model is the model id (or alias) the agent runs on.
	Model    string   `json:"model,omitempty"`
	Settings Settings `json:"settings"`

	// Bundle names a git bundle that holds BaseCommit in the stream's
	// object store: "sha256-" and the hex digest of its bytes, which the
	// worker checks before cloning, so the signature covers the code too.
	// Empty when Repository names a URL the worker can reach instead.
	Bundle     string `json:"bundle,omitempty"`
	Repository string `json:"repository,omitempty"`
	BaseCommit string `json:"base_commit"`

	// Teammate makes the job a teammate spawn: the worker runs the named
	// member of a team on NATS until the lead shuts it down, instead of
	// one prompt. Nil for a remote agent.
	Teammate *Teammate `json:"teammate,omitempty"`

	// Retry marks the lead's submission again of a job taken from the
	// queue and claimed by no worker (claim.go). Nil on the first.
	Retry *Retry `json:"retry,omitempty"`
}

// Retry is what a job submitted again carries: which attempt it is (1 for
// the first resubmission), the message id it is published with
// (jobMsgID), and the lead's signature on the job's first envelope — the
// job's lineage, which its results, progress, claims and cancellations
// quote, whichever attempt a worker runs.
type Retry struct {
	Attempt int    `json:"attempt"`
	Of      []byte `json:"of"`
}

// Teammate is what a worker needs to run a member of a team whose
// mailboxes, task list and team file are on NATS JetStream. It travels in
// the signed job, so the lead's key for the team's messages reaches the
// worker with the lead's signature on it.
type Teammate struct {
	// Team and Member name the team and the member to run.
	Team   string `json:"team"`
	Member string `json:"member"`
	// NATS is the server the team's file names ("nats").
	NATS string `json:"nats"`
	// LeadKey is the public key (ed25519, base64) the lead signs the
	// team's messages with: the worker pins it, so no one who may write
	// the team's bucket can pass for the lead.
	LeadKey string `json:"lead_key"`
	// JoinSecret (base64, fresh for each spawn) proves to the lead that a
	// member key claimed in the team's bucket was made by the process that
	// took this spawn: the lead signs only such a key (team.Store.Admit).
	JoinSecret string `json:"join_secret"`
	// PlanModeRequired: the member must have its plan approved by the
	// lead before it changes anything. With the job's mode (capped by the
	// worker's policy) it is the member's permission state on the worker,
	// whatever the team's bucket says.
	PlanModeRequired bool `json:"plan_mode_required,omitempty"`
	// Grants are the lead-signed key grants of the team's members when it
	// spawned this one (team.KeyGrant JSON, team.Store.SpawnGrants): the
	// worker accepts no older key of any member, whatever the team's
	// bucket says.
	Grants []string `json:"grants,omitempty"`
	// TermsCreated and TermsSeq name the lead's signed terms the spawn was
	// issued under (team.TermsMark): the worker accepts none older from
	// the team's bucket (an earlier same-name team's, or revoked ones).
	TermsCreated int64  `json:"terms_created,omitempty"`
	TermsSeq     uint64 `json:"terms_seq,omitempty"`
}

// Definition is the agent definition a job runs: the fields of a Claude
// Code agent file that say what the agent is, and none that would run
// code on the worker outside the agent's own tools (hooks, MCP servers).
type Definition struct {
	Name            string   `json:"name"`
	Description     string   `json:"description,omitempty"`
	Prompt          string   `json:"prompt,omitempty"`
	Tools           []string `json:"tools,omitempty"`
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	Model           string   `json:"model,omitempty"`
	PermissionMode  string   `json:"permissionMode,omitempty"`
	MaxTurns        int      `json:"maxTurns,omitempty"`
}

// Settings are the permission settings a job asks for. The worker's
// Policy caps them (Policy.Apply).
type Settings struct {
	// Mode is the permission mode (default when empty).
	Mode string `json:"mode,omitempty"`
	// Allow and Deny are permission rules ("Bash(go test:*)", "Edit").
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// MaxTurns bounds the agent's model calls; WallTime its run.
	MaxTurns int      `json:"max_turns,omitempty"`
	WallTime Duration `json:"wall_time,omitempty"`
	// MaxBudgetUSD is what the job may spend on its model, in US dollars
	// (0: no cap of the lead's): its share of the lead's spend caps.
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// Sandbox "off" asks for Bash without the kernel sandbox. No worker
	// grants it; it is here so that the refusal can be said, not guessed.
	Sandbox string `json:"sandbox,omitempty"`
}

// Duration is a time.Duration written as Go's duration text ("90s").
type Duration time.Duration

// MarshalJSON writes d as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads d from text such as "90s" or "10m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is text such as \"90s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MaxJobBytes bounds a job's encoded size. The code is not in it (it is
// in the object store), so a job stays well under a server's default
// max_payload of 1 MiB.
const MaxJobBytes = 512 << 10

var (
	jobIDPattern  = lazyre.New(`^[a-z0-9][a-z0-9-]{0,63}$`)
	commitPattern = lazyre.New(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	bundlePattern = lazyre.New(`^sha256-[0-9a-f]{64}$`)
)

// ErrDecode marks a payload that is not a job a worker can run.
var ErrDecode = errors.New("remote: job does not decode")

// DecodeJob reads a job strictly: unknown fields, trailing data and
// missing required fields are errors wrapping ErrDecode that name what is
// wrong.
func DecodeJob(data []byte) (*Job, error) {
	var j Job
	if err := decodeStrict(data, &j); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecode, err)
	}
	if err := j.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecode, err)
	}
	return &j, nil
}

// Validate checks the fields every job must have.
func (j *Job) Validate() error {
	switch {
	case !jobIDPattern.MatchString(j.ID):
		return fmt.Errorf("job id %q: want 1-64 of [a-z0-9-], starting with a letter or digit", j.ID)
	case j.Lead == "":
		return errors.New(`job has no "lead" (the name of the key that signed it)`)
	case j.Prompt == "":
		return fmt.Errorf("job %s has no prompt", j.ID)
	case j.Definition.Name == "":
		return fmt.Errorf("job %s: its definition has no name", j.ID)
	case !commitPattern.MatchString(j.BaseCommit):
		return fmt.Errorf("job %s: base_commit %q is not a full commit id", j.ID, j.BaseCommit)
	case j.Bundle == "" && j.Repository == "":
		return fmt.Errorf("job %s carries no code: it needs a git bundle or a repository URL", j.ID)
	case j.Bundle != "" && j.Repository != "":
		return fmt.Errorf("job %s has both a bundle and a repository URL; send one", j.ID)
	case j.Bundle != "" && !bundlePattern.MatchString(j.Bundle):
		return fmt.Errorf("job %s: bundle %q is not a sha256- digest name", j.ID, j.Bundle)
	}
	if r := j.Retry; r != nil && (r.Attempt < 1 || len(r.Of) != ed25519.SignatureSize) {
		return fmt.Errorf("job %s: retry: want an attempt of at least 1 and the first envelope's ed25519 signature", j.ID)
	}
	if t := j.Teammate; t != nil {
		return t.validate(j.ID)
	}
	return nil
}

var memberPattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func (t *Teammate) validate(id string) error {
	key, err := base64.StdEncoding.DecodeString(t.LeadKey)
	switch {
	case !memberPattern.MatchString(t.Team) || !memberPattern.MatchString(t.Member):
		return fmt.Errorf("job %s: teammate %q of team %q: want names of 1-64 letters, digits, '_' or '-'", id, t.Member, t.Team)
	case t.NATS == "":
		return fmt.Errorf("job %s: teammate %s names no NATS server for its team", id, t.Member)
	case err != nil || len(key) != ed25519.PublicKeySize:
		return fmt.Errorf("job %s: teammate %s: lead_key is not a base64 ed25519 public key", id, t.Member)
	}
	if secret, err := base64.StdEncoding.DecodeString(t.JoinSecret); err != nil || len(secret) < 16 {
		return fmt.Errorf("job %s: teammate %s: join_secret is not base64 of at least 16 bytes", id, t.Member)
	}
	return nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// AgentsJSON renders the definition as agent definitions in JSON text
// ({"name": {"description": …, "prompt": …, "tools": […]}}), as a
// session on the worker loads them.
func (d Definition) AgentsJSON() (string, error) {
	entry := map[string]any{"description": cmp.Or(d.Description, "remote agent"), "prompt": d.Prompt}
	if len(d.Tools) > 0 {
		entry["tools"] = d.Tools
	}
	if len(d.DisallowedTools) > 0 {
		entry["disallowedTools"] = d.DisallowedTools
	}
	if d.Model != "" {
		entry["model"] = d.Model
	}
	if d.PermissionMode != "" {
		entry["permissionMode"] = d.PermissionMode
	}
	if d.MaxTurns > 0 {
		entry["maxTurns"] = d.MaxTurns
	}
	b, err := json.Marshal(map[string]any{d.Name: entry})
	return string(b), err
}

// Summary is a short line for a tool call's input, as Progress.Description
// reports it: its description, path, command or pattern when it has one.
func Summary(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range []string{"description", "file_path", "command", "pattern", "path"} {
		if s, ok := in[k].(string); ok && s != "" {
			if len(s) > 120 {
				s = s[:120] + "…"
			}
			return s
		}
	}
	return ""
}
