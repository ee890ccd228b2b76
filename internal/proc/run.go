//go:build unix

package proc

import "context"

// Run starts c and waits for it. A non-zero exit is reported in Exit, not
// as an error.
func Run(ctx context.Context, c Command) (Exit, error) {
	p, err := Start(ctx, c)
	if err != nil {
		return Exit{}, err
	}
	return p.Wait()
}

// Result is the outcome of Output.
type Result struct {
	Exit
	// Output is stdout and stderr as the process interleaved them, cut to
	// the limit with a note in the middle saying how much was omitted.
	Output string
	// Total is how many bytes were produced; Dropped how many are not in
	// Output.
	Total   int64
	Dropped int64
}

// Output runs c with stdout and stderr merged into one capture that keeps
// at most limit bytes (head and tail). c.Stdout, c.Stderr and c.MergeStderr
// are overridden.
func Output(ctx context.Context, c Command, limit int) (Result, error) {
	capture := NewCapture(limit)
	c.Stdout, c.Stderr, c.MergeStderr = capture, nil, true
	exit, err := Run(ctx, c)
	return Result{Exit: exit, Output: capture.String(), Total: capture.Total(), Dropped: capture.Dropped()}, err
}
