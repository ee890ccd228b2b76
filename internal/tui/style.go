package tui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// cursorMark stands for the cursor in the input until it is drawn (a
// private-use character no text the user types can hold: Clean keeps it,
// so the editor drops it on insert).
const cursorMark = "\uE000"

// styles are the UI's looks. Colours are downsampled to what the terminal
// has, and dropped with NO_COLOR, by the program's renderer.
type styles struct {
	dim, bold, cursor, user, tool, errText, ok, warn, border, badge lipgloss.Style
}

func newStyles() styles {
	return styles{
		dim:     lipgloss.NewStyle().Faint(true),
		bold:    lipgloss.NewStyle().Bold(true),
		cursor:  lipgloss.NewStyle().Reverse(true),
		user:    lipgloss.NewStyle().Foreground(lipgloss.Color("12")),
		tool:    lipgloss.NewStyle().Foreground(lipgloss.Color("13")),
		errText: lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		ok:      lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		warn:    lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		border:  lipgloss.NewStyle().Faint(true),
		badge:   lipgloss.NewStyle().Bold(true).Reverse(true),
	}
}

// agentColor maps a team colour name (or an empty one) to a terminal
// colour.
func agentColor(name string) lipgloss.Style {
	c := map[string]string{"red": "1", "green": "2", "yellow": "3", "blue": "4", "purple": "5",
		"magenta": "5", "cyan": "6", "orange": "208", "pink": "205"}[name]
	if c == "" {
		return lipgloss.NewStyle()
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color(c))
}

// wrap cuts plain text (Clean it first) into lines of at most width
// cells, at spaces where it can.
func wrap(s string, width int) []string {
	if width < 1 {
		width = 1
	}
	if ansi.StringWidth(s) <= width && !strings.Contains(s, "\n") {
		return []string{s}
	}
	return strings.Split(ansi.Wrap(s, width, ""), "\n")
}

// fit cuts a line to width cells (with an ellipsis) and pads it.
func fit(s string, width int) string {
	if width < 1 {
		return ""
	}
	if w := ansi.StringWidth(s); w > width {
		return ansi.Truncate(s, width, "…")
	} else {
		return s + strings.Repeat(" ", width-w)
	}
}

// cut is fit without the padding.
func cut(s string, width int) string {
	if width < 1 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1000)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprint(n)
}

func cost(usd float64) string { return fmt.Sprintf("$%.4f", usd) }
