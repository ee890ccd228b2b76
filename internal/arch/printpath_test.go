package arch

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// printModules are the modules cmd/cohort links today, the binary that runs
// `cohort -p`. Every package a binary links is initialised in every run, and
// the runtime reads the type descriptors of every interface conversion the
// binary holds before main: the pages those touch are most of the fan-out's
// peak RSS (BENCHMARKS.md §17: of the 422 64 KB windows of the binary an
// idle `cohort -p` maps, 323 are touched before main, 42 of those by the
// OpenAI SDK's initialisation alone). A module joins this list only with its measured
// cost in BENCHMARKS.md; a subsystem print runs do not need goes in a
// helper executable, as workflows went to cmd/cohort-workflow.
var printModules = []string{
	"charm.land/bubbletea/v2",
	"charm.land/lipgloss/v2",
	"github.com/anthropics/anthropic-sdk-go/v2",
	"github.com/bahlo/generic-list-go",
	"github.com/bmatcuk/doublestar/v4",
	"github.com/buger/jsonparser",
	"github.com/charmbracelet/colorprofile",
	"github.com/charmbracelet/ultraviolet",
	"github.com/charmbracelet/x/ansi",
	"github.com/charmbracelet/x/term",
	"github.com/charmbracelet/x/termios",
	"github.com/charmbracelet/x/windows",
	"github.com/clipperhouse/displaywidth",
	"github.com/clipperhouse/uax29/v2",
	"github.com/coder/websocket",
	"github.com/fsnotify/fsnotify",
	"github.com/go-logr/logr",
	"github.com/go-logr/stdr",
	"github.com/gofrs/flock",
	"github.com/google/jsonschema-go",
	"github.com/invopop/jsonschema",
	"github.com/klauspost/compress",
	"github.com/lucasb-eyer/go-colorful",
	"github.com/mattn/go-runewidth",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/muesli/cancelreader",
	"github.com/nats-io/nats.go",
	"github.com/nats-io/nkeys",
	"github.com/nats-io/nuid",
	"github.com/openai/openai-go/v3",
	"github.com/pb33f/ordered-map/v2",
	"github.com/rivo/uniseg",
	"github.com/segmentio/asm",
	"github.com/segmentio/encoding",
	"github.com/spf13/cobra",
	"github.com/spf13/pflag",
	"github.com/standard-webhooks/standard-webhooks/libraries",
	"github.com/tidwall/gjson",
	"github.com/tidwall/match",
	"github.com/tidwall/pretty",
	"github.com/tidwall/sjson",
	"github.com/xo/terminfo",
	"github.com/yosida95/uritemplate/v3",
	"go.opentelemetry.io/auto/sdk",
	"go.opentelemetry.io/otel",
	"go.opentelemetry.io/otel/metric",
	"go.opentelemetry.io/otel/trace",
	"go.yaml.in/yaml/v3",
	"go.yaml.in/yaml/v4",
	"golang.org/x/crypto",
	"golang.org/x/oauth2",
	"golang.org/x/sync",
	"golang.org/x/sys",
	"golang.org/x/time",
	"mvdan.cc/sh/v3",
}

// neverOnPrintPath are heavy modules of go.mod that cmd/cohort must not link
// at all, named so the failure says why: the embedded NATS server (tests
// and `cohort remote` workers start it), the JavaScript engine (workflows,
// cmd/cohort-workflow), the terminal emulator the TUI's tests drive.
var neverOnPrintPath = []string{"github.com/nats-io/nats-server/v2", "github.com/dop251/goja", "github.com/charmbracelet/x/vt"}

// TestPrintBinaryLinksKnownModules: cmd/cohort links exactly the modules
// of printModules (for linux, the platform the fan-out is measured on). A
// new one fails until it is listed, with its cost measured; one no longer
// linked fails until it is removed, so the list stays what the binary is.
func TestPrintBinaryLinksKnownModules(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{with .Module}}{{.Path}}{{end}}`, module+"/cmd/cohort")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	linked := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		if m := strings.TrimSpace(line); m != "" && m != module {
			linked[m] = true
		}
	}
	for m := range linked {
		switch {
		case slices.Contains(neverOnPrintPath, m):
			t.Errorf("cmd/cohort links %s: every `cohort -p` would initialise it; keep it in its own executable (go list -deps -f '{{.ImportPath}} {{.Imports}}' ./cmd/cohort names the importer)", m)
		case !slices.Contains(printModules, m):
			t.Errorf("cmd/cohort links a new module, %s: every `cohort -p` initialises it and maps its pages; measure the fan-out's peak RSS with and without it (bench/cmd/rsspages, BENCHMARKS.md §17) and list it in printModules, or keep it out of the print binary", m)
		}
	}
	for _, m := range printModules {
		if !linked[m] {
			t.Errorf("cmd/cohort no longer links %s: remove it from printModules", m)
		}
	}
}
