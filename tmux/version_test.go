package tmux

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"tmux 3.3a\n", Version{3, 3, "3.3a"}, false},
		{"tmux 3.4", Version{3, 4, "3.4"}, false},
		{"tmux 2.9a", Version{2, 9, "2.9a"}, false},
		{"tmux 1.8", Version{1, 8, "1.8"}, false},
		{"tmux next-3.6", Version{3, 6, "next-3.6"}, false},
		{"tmux 3.5-rc", Version{3, 5, "3.5-rc"}, false},
		{"tmux master", Version{develVersion, 0, "master"}, false},
		{"tmux openbsd-7.5", Version{develVersion, 0, "openbsd-7.5"}, false},
		{"", Version{}, true},
		{"screen 4.0", Version{}, true},
		{"tmux", Version{}, true},
		{"tmux 3", Version{}, true},
		{"tmux +3.1", Version{}, true},
		{"tmux 3.x", Version{}, true},
		{"tmux 99999.1", Version{}, true},
		{"tmux 3.3 extra", Version{}, true},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseVersion(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseVersion(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestFeatures(t *testing.T) {
	tests := []struct {
		v    Version
		want features
	}{
		{Version{2, 0, "2.0"}, features{}},
		{Version{2, 6, "2.6"}, features{paneTitle: true}},
		{Version{3, 0, "3.0"}, features{envFlag: true, paneOptions: true, paneTitle: true}},
		{Version{3, 1, "3.1"}, features{envFlag: true, paneOptions: true, paneTitle: true, sizePercent: true}},
		{Version{develVersion, 0, "master"}, features{envFlag: true, paneOptions: true, paneTitle: true, sizePercent: true}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, featuresOf(tt.v), cmp.AllowUnexported(features{})); diff != "" {
			t.Errorf("featuresOf(%s) (-want +got):\n%s", tt.v, diff)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"tmux 3.3a", "tmux next-3.6", "tmux master", "tmux 2.9", "tmux 1.9a", "tmux 3.", "tmux .3", "tmux 3.3 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Raw == "" {
			t.Fatalf("ParseVersion(%q) = %+v", s, v)
		}
		if !v.AtLeast(v.Major, v.Minor) || v.AtLeast(v.Major, v.Minor+1) {
			t.Fatalf("AtLeast is inconsistent for %+v", v)
		}
	})
}
