// Package tuiscreen reads what the terminal UI shows, for tests that
// compare its figures: the frame tests of internal/tui and the end-to-end
// tests that drive the real binary in tmux. It holds patterns for the
// lines the UI prints, not the UI itself, so both kinds of test read a
// screen the same way.
package tuiscreen

import "regexp"

// The places the UI prints the session's cost: the status bar, a turn's
// footer (the result's total_cost_usd) and /cost's total line. Each
// pattern's first group is the dollar figure as printed ("$0.1234").
var (
	StatusCost = regexp.MustCompile(`· \d+ agents · (\$\d+\.\d{4}) · ctrl\+t tree`)
	FooterCost = regexp.MustCompile(`done in \d+ turns? · (\$\d+\.\d{4}) this session`)
	ListedCost = regexp.MustCompile(`(?m)^ *total +(\$\d+\.\d{4})`)
)

// LastMatch is the first group of re's last match in screen ("" if
// none): the figure the screen shows now, below earlier ones.
func LastMatch(re *regexp.Regexp, screen string) string {
	all := re.FindAllStringSubmatch(screen, -1)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1][1]
}
