package cohort

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/assemble"
)

// notSerialisable are the Config fields a configuration file cannot carry
// (callbacks, writers, transports, tools): a teammate process has its own
// environment and stderr, and the lead's callbacks answer for it.
var notSerialisable = []string{"CanUseTool", "Hooks", "AskUser", "ApprovePlan", "MCPTransports", "Tools", "Wake",
	"Getenv", "Environ", "Stderr"}

// teammateInherits are the fields a teammate process takes from its lead's
// Config; teammateGets those the lead sets for it. Every other field is the
// lead's own (what it resumes, traces, prints and limits).
var (
	teammateInherits = []string{"Provider", "BaseURL", "APIKey", "PermissionMode", "AllowedTools", "DisallowedTools",
		"AddDirs", "Flags", "ToolPool", "SettingSources", "FallbackModel", "Betas", "Verbose"}
	teammateGets = []string{"Dir", "Home", "Model", "Env", "Role"}
	leadOnly     = []string{"WorkflowHost", "PermissionPromptCommand", "SystemPrompt", "AppendSystemPrompt", "Agent",
		"Agents", "Settings", "Proactive", "MCPConfig", "StrictMCPConfig", "MaxThinkingTokens", "JSONSchema",
		"Resume", "Continue", "SessionID", "ForkSession", "MaxTurns", "MaxBudgetUSD", "MaxConcurrentAgents",
		"AgentMaxTurns", "AgentTimeout", "MaxAgentDepth", "EvictAfter", "TeammateMode", "TeammateBackends",
		"TeammatePermissionTimeout", "TeammateCommand", "Sandbox", "Trace", "PartialMessages", "StopAfterRun",
		"AutoDream", "Remote"}
)

// fill sets every field of v that JSON can carry to a value that is not
// its zero value, distinct per field (n counts them).
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if sf.Tag.Get("json") == "-" {
			continue
		}
		*n++
		switch f.Kind() {
		case reflect.String:
			f.SetString(sf.Name + "-value")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(1000 + *n))
			if f.Type() == reflect.TypeFor[time.Duration]() {
				f.SetInt(int64(time.Duration(*n) * time.Second))
			}
		case reflect.Float64:
			f.SetFloat(float64(*n) + 0.5)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{sf.Name + "-a", sf.Name + "-b"}))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{sf.Name: "v"}))
		case reflect.Struct:
			fill(t, f, n)
		default:
			t.Fatalf("Config.%s is a %s: teach fill to set it", sf.Name, f.Kind())
		}
	}
}

// TestConfigTravelsWhole: every field of a Config that a configuration
// file can carry survives encoding and decoding (what a teammate process
// reads), and every field it cannot carry is named in notSerialisable, so
// that a new field a teammate would silently not receive fails here.
func TestConfigTravelsWhole(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		sf := typ.Field(i)
		listed := slices.Contains(notSerialisable, sf.Name)
		if dash := sf.Tag.Get("json") == "-"; dash != listed {
			t.Errorf("Config.%s: json:\"-\" is %v but its being in notSerialisable is %v; a field a file cannot carry must be listed, and only such a field", sf.Name, dash, listed)
		}
	}
	for _, name := range notSerialisable {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("notSerialisable names %s, which is no field of Config", name)
		}
	}
	var c Config
	n := 0
	fill(t, reflect.ValueOf(&c).Elem(), &n)
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, back); d != "" {
		t.Errorf("the Config changed on its way through JSON (-sent +read):\n%s", d)
	}
	// A nil pool (every tool) and an empty one (none) stay apart.
	for _, pool := range [][]string{nil, {}} {
		data, _ := json.Marshal(Config{ToolPool: pool, SettingSources: pool})
		var back Config
		if err := json.Unmarshal(data, &back); err != nil || (back.ToolPool == nil) != (pool == nil) || (back.SettingSources == nil) != (pool == nil) {
			t.Errorf("ToolPool %#v came back as %#v (%v)", pool, back.ToolPool, err)
		}
	}
}

// TestTeammateConfig: a teammate's configuration holds what it inherits
// from its lead and what the lead sets for it, and nothing of the lead's
// own; every Config field is one of the three.
func TestTeammateConfig(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		kinds := 0
		for _, l := range [][]string{teammateInherits, teammateGets, leadOnly, notSerialisable} {
			if slices.Contains(l, name) {
				kinds++
			}
		}
		if kinds != 1 {
			t.Errorf("Config.%s is in %d of teammateInherits, teammateGets, leadOnly and notSerialisable; put it in one: does a teammate process get it?", name, kinds)
		}
	}
	var lead Config
	n := 0
	fill(t, reflect.ValueOf(&lead).Elem(), &n)
	spec := assemble.ChildSpec{Member: assemble.Membership{Team: "t", Name: "alice", LeadSession: "s", Siblings: "b"},
		Model: "sonnet", Home: "/h/.cohort", Cwd: "/p", Environment: map[string]string{"ANTHROPIC_API_KEY": "k"}}
	data, err := lead.teammateConfig(spec)
	if err != nil {
		t.Fatal(err)
	}
	var got Config
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := Config{Dir: "/p", Home: "/h/.cohort", Model: "sonnet", Env: spec.Environment,
		Role: Role{Team: "t", Name: "alice", Session: "s", Siblings: "b"}}
	gv, lv := reflect.ValueOf(&want).Elem(), reflect.ValueOf(lead)
	for _, name := range teammateInherits {
		gv.FieldByName(name).Set(lv.FieldByName(name))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the teammate's configuration (-want +got):\n%s", d)
	}
	spec.Scripted = true
	data, _ = lead.teammateConfig(spec)
	got = Config{}
	if err := json.Unmarshal(data, &got); err != nil || got.BaseURL != "" || got.APIKey != "" {
		t.Errorf("a scripted lead's teammate reaches its fake through its environment, not the lead's base URL and key: %+v", got)
	}
}
