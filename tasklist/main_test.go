package tasklist

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestMain(m *testing.M) {
	if os.Getenv(envClaimer) != "" {
		os.Exit(claimerMain())
	}
	goleak.VerifyTestMain(m)
}

// t0 is the clock start of every test list.
var t0 = time.UnixMilli(1_750_000_000_000)

// stepClock returns a clock that advances one second per call, so every
// timestamp differs and tests stay deterministic.
func stepClock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Second)
	}
}

type jsonRaw = json.RawMessage

// compactJSON returns raw without insignificant white space.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "invalid: " + string(raw)
	}
	return b.String()
}

// stringify compacts raw JSON values for comparison.
func stringify(m map[string]jsonRaw) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = compactJSON(v)
	}
	return out
}
