package tmux

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
)

// Version is a tmux release as reported by `tmux -V`.
type Version struct {
	Major, Minor int
	// Raw is the version word as tmux printed it ("3.3a", "next-3.6",
	// "master").
	Raw string
}

// develVersion stands for builds that name no release (master, OpenBSD's
// base system): they are at least as new as any release we know.
const develVersion = 99

// minVersion is the oldest tmux we drive: 2.0 is where split-window and
// respawn-pane learnt to run a command given as several arguments without
// a shell, which is what keeps teammate argv safe from injection.
var minVersion = Version{Major: 2, Minor: 0, Raw: "2.0"}

// AtLeast reports whether v is major.minor or newer.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || v.Major == major && v.Minor >= minor
}

func (v Version) String() string { return v.Raw }

// ParseVersion reads the output of `tmux -V` ("tmux 3.3a", "tmux next-3.6",
// "tmux master", "tmux openbsd-7.5").
func ParseVersion(out string) (Version, error) {
	fields := strings.Fields(out)
	if len(fields) != 2 || fields[0] != "tmux" {
		return Version{}, fmt.Errorf("tmux -V printed %q, not \"tmux <version>\"", clip.String(out, 80))
	}
	word := fields[1]
	switch {
	case word == "master", strings.HasPrefix(word, "openbsd-"):
		return Version{Major: develVersion, Raw: word}, nil
	}
	num := strings.TrimPrefix(word, "next-")
	major, rest, ok := strings.Cut(num, ".")
	if !ok {
		return Version{}, fmt.Errorf("tmux version %q is not <major>.<minor>", clip.String(word, 40))
	}
	minorDigits := rest // "3a", "4-rc": the leading digits
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minorDigits = rest[:i]
	}
	if !isNumber(major) || !isNumber(minorDigits) {
		return Version{}, fmt.Errorf("tmux version %q is not <major>.<minor>", clip.String(word, 40))
	}
	ma, _ := strconv.Atoi(major)
	mi, _ := strconv.Atoi(minorDigits)
	return Version{Major: ma, Minor: mi, Raw: word}, nil
}

// isNumber reports whether s is 1 to 4 ASCII digits.
func isNumber(s string) bool {
	if len(s) == 0 || len(s) > 4 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// features are the version-dependent parts of the commands we build.
type features struct {
	envFlag     bool // -e KEY=VAL on respawn-pane (3.0)
	paneOptions bool // set-option -p: remain-on-exit per pane (3.0)
	paneTitle   bool // select-pane -T (2.6)
	sizePercent bool // -l N% instead of -p N (3.1)
}

func featuresOf(v Version) features {
	return features{
		envFlag:     v.AtLeast(3, 0),
		paneOptions: v.AtLeast(3, 0),
		paneTitle:   v.AtLeast(2, 6),
		sizePercent: v.AtLeast(3, 1),
	}
}
