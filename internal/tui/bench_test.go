package tui

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// BenchmarkTreeFrame1000Agents is one frame's work on the tree of 1,000
// running agents at 5,000 events a second: the events of one 60 Hz frame
// (84, i.e. 42 tool calls) folded in, the snapshot taken, and the frame
// drawn. ns/op is the time of a frame.
func BenchmarkTreeFrame1000Agents(b *testing.B) {
	start := time.Now()
	c := newCrowd(1000, start)
	m := newModel(Options{Session: c, Now: func() time.Time { return start.Add(90 * time.Second) }})
	m.width, m.high, m.screen = 120, 40, screenTree
	m.tree.set(c.Agents())
	n := 0
	for b.Loop() {
		for range 42 {
			c.tick(n)
			for _, ev := range toolEvents(n%1000, n) {
				m.event(ev)
			}
			n++
		}
		m.refresh()
		m.tree.move(1)
		_ = m.frame()
	}
}

// cpuTime is the process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runCrowd runs the real program on c, drawing to io.Discard, on the tree.
func runCrowd(b *testing.B, c *crowd, now func() time.Time) (*tea.Program, *Model, func()) {
	p, m := NewProgram(context.Background(), Options{Session: c, Now: now}, nil, io.Discard,
		tea.WithWindowSize(120, 40), tea.WithoutSignalHandler(), tea.WithColorProfile(colorprofile.ANSI256))
	done := make(chan error, 1)
	go func() {
		_, err := p.Run()
		done <- err
	}()
	p.Send(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	return p, m, func() {
		p.Quit()
		if err := <-done; err != nil {
			b.Error(err)
		}
		m.shutdown()
	}
}

// BenchmarkEventLoad1000Agents runs the program with 1,000 agents while
// events arrive at 5,000 a second for 5 s (tool calls of every agent in
// turn, their usage rising), and reports the process's CPU in cores and
// the frames drawn per second.
func BenchmarkEventLoad1000Agents(b *testing.B) {
	for b.Loop() {
		c := newCrowd(1000, time.Now())
		_, m, stop := runCrowd(b, c, time.Now)
		const rate, secs = 5000, 5
		cpu0, t0, r0 := cpuTime(), time.Now(), m.Renders()
		tick := time.NewTicker(time.Millisecond) // 5 events a millisecond
		n := 0
		for n < rate*secs/2 {
			<-tick.C
			behind := int(time.Since(t0).Milliseconds())*rate/1000/2 - n
			for range max(behind, 0) {
				c.tick(n)
				for _, ev := range toolEvents(n%1000, n) {
					m.feed.push(ev)
				}
				n++
			}
		}
		tick.Stop()
		wall, cpu, frames := time.Since(t0), cpuTime()-cpu0, m.Renders()-r0
		stop()
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu-cores")
		b.ReportMetric(float64(frames)/wall.Seconds(), "frames/s")
		b.ReportMetric(float64(2*n)/wall.Seconds(), "events/s")
	}
}

// BenchmarkIdle10s leaves the program idle for 10 s with 1,000 finished
// agents on the tree and reports the CPU it used and the frames it drew
// meanwhile (none: nothing ticks when nothing happens).
func BenchmarkIdle10s(b *testing.B) {
	for b.Loop() {
		start := time.Now()
		c := newCrowd(1000, start)
		c.finish(start)
		_, m, stop := runCrowd(b, c, time.Now)
		// Let the first frames settle: the tree key's refresh, then quiet.
		time.Sleep(time.Second)
		cpu0, r0 := cpuTime(), m.Renders()
		time.Sleep(10 * time.Second)
		cpu, frames := cpuTime()-cpu0, m.Renders()-r0
		stop()
		b.ReportMetric(float64(cpu.Microseconds())/1000, "idle-cpu-ms")
		b.ReportMetric(float64(frames), "idle-frames")
	}
}
