package permission

import (
	"slices"
	"testing"
)

// TestWriteTargets: what a prompt can tell a line writes before it runs.
func TestWriteTargets(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{"mkdir -p /outside/a/b", []string{"/outside/a/b"}},
		{"cp /etc/hosts out/hosts && touch ~/x", []string{"/work/out/hosts", "/home/u/x"}},
		{"cd /srv && rm -rf old", []string{"/srv/old"}},
		{"echo hi > ../up.txt 2>/dev/null", []string{"/up.txt"}},
		{"go build ./... | tee log.txt", []string{"/work/log.txt"}},
		{"ls /etc; cat /etc/hosts", nil},
		{"rm $DIR/x", nil},
	} {
		got := WriteTargets(tt.line, "/work", "/home/u")
		if !slices.Equal(got, tt.want) {
			t.Errorf("WriteTargets(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}
