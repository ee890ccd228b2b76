package tui

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// painter puts frames on the terminal: it rewrites only the lines that
// changed, at most once a frameGap, from a goroutine of its own, and does
// nothing at all while nothing changes. (Bubbletea's own renderer flushes
// on a 60 Hz ticker whether or not anything changed: 600 wake-ups in an
// idle 10 s. The program runs with that renderer off, at 1 Hz, and the
// painter draws instead.)
//
// set is called by the program's loop; the painter's goroutine owns the
// terminal. Safe for concurrent use.
type painter struct {
	out     io.Writer
	profile colorprofile.Profile

	mu     sync.Mutex
	want   []string
	raw    []string // sequences to send as they are (OSC 9), before the next frame
	w, h   int
	closed bool

	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup

	have []string // the loop's: what the terminal shows
	hw   int
	last time.Time
}

func newPainter(out io.Writer, profile colorprofile.Profile) *painter {
	if profile < colorprofile.ASCII {
		profile = colorprofile.ASCII // cursor moves are still needed
	}
	p := &painter{out: out, profile: profile, kick: make(chan struct{}, 1), done: make(chan struct{})}
	io.WriteString(out, ansi.SetModeAltScreenSaveCursor+ansi.HideCursor+ansi.SetModeFocusEvent+
		ansi.SetModeBracketedPaste+ansi.EraseEntireScreen+ansi.CursorHomePosition)
	p.wg.Add(1)
	go p.loop()
	return p
}

// set asks for frame to be shown on a w×h terminal.
func (p *painter) set(frame string, w, h int) {
	lines := strings.Split(frame, "\n")
	p.mu.Lock()
	p.want, p.w, p.h = lines, w, h
	p.mu.Unlock()
	p.wake()
}

// send queues a sequence for the terminal (a notification).
func (p *painter) send(seq string) {
	p.mu.Lock()
	p.raw = append(p.raw, seq)
	p.mu.Unlock()
	p.wake()
}

func (p *painter) wake() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// stop draws what is pending, gives the terminal back and waits.
func (p *painter) stop() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	close(p.done)
	p.wg.Wait()
	io.WriteString(p.out, ansi.ResetModeBracketedPaste+ansi.ResetModeFocusEvent+ansi.ShowCursor+ansi.ResetModeAltScreenSaveCursor)
}

func (p *painter) loop() {
	defer p.wg.Done()
	for {
		select {
		case <-p.done:
			p.paint()
			return
		case <-p.kick:
		}
		// Frames closer than frameGap are drawn as one: wait out the gap
		// (a timer only while frames come), then draw the latest.
		if gap := frameGap - time.Since(p.last); gap > 0 {
			t := time.NewTimer(gap)
			select {
			case <-t.C:
			case <-p.done:
				t.Stop()
				p.paint()
				return
			}
		}
		p.paint()
	}
}

// paint writes the lines that differ from what the terminal shows, in one
// write inside a synchronized update.
func (p *painter) paint() {
	p.mu.Lock()
	want, w, h, raw := p.want, p.w, p.h, p.raw
	p.raw = nil
	p.mu.Unlock()
	p.last = time.Now()
	var b bytes.Buffer
	for _, r := range raw {
		b.WriteString(r)
	}
	if want != nil {
		if w != p.hw || len(p.have) != h {
			p.have = make([]string, h)
			for i := range p.have {
				p.have[i] = "\x00" // unlike any line: everything is drawn
			}
			p.hw = w
			b.WriteString(ansi.EraseEntireScreen)
		}
		cw := &colorprofile.Writer{Forward: &b, Profile: p.profile}
		started := false
		for y := 0; y < h; y++ {
			line := ""
			if y < len(want) {
				line = want[y]
			}
			if p.have[y] == line {
				continue
			}
			if !started {
				b.WriteString(ansi.SetModeSynchronizedOutput)
				started = true
			}
			p.have[y] = line
			// Erase first: erasing after a full-width line would take its
			// last cell (the cursor waits on it to wrap).
			b.WriteString(ansi.CursorPosition(1, y+1) + ansi.ResetStyle + ansi.EraseEntireLine)
			cw.Write([]byte(line))
			b.WriteString(ansi.ResetStyle)
		}
		if started {
			b.WriteString(ansi.ResetModeSynchronizedOutput)
		}
	}
	if b.Len() > 0 {
		p.out.Write(b.Bytes())
	}
}
