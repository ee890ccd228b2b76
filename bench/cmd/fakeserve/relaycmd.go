package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi/relay"
)

// relayCommand runs `fakeserve relay answer [-dir DIR] [-wait D] N FILE`:
// it writes request N's answer whole and prints the relay's verdict.
func relayCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := "usage: fakeserve relay answer [-dir DIR] [-wait DURATION] N FILE   (FILE - reads stdin)"
	if len(args) == 0 || args[0] != "answer" {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("fakeserve relay answer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".", "the relay directory (fakeserve -relay DIR)")
	wait := fs.Duration("wait", 30*time.Second, "how long to wait for the relay to read the answer")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	n, err := strconv.Atoi(fs.Arg(0))
	if err != nil || n < 1 {
		fmt.Fprintf(stderr, "fakeserve relay answer: %q is not a request number (the NNNN of NNNN.request.md)\n", fs.Arg(0))
		return 2
	}
	var data []byte
	if fs.Arg(1) == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(fs.Arg(1))
	}
	if err != nil {
		fmt.Fprintf(stderr, "fakeserve relay answer: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *wait)
	defer cancel()
	st, err := relay.Submit(ctx, *dir, n, data)
	if err != nil {
		fmt.Fprintf(stderr, "fakeserve relay answer: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "request %d: %s\n", n, st.State)
	if st.Detail != "" {
		fmt.Fprintln(stdout, st.Detail)
	}
	if st.State != relay.Answered {
		return 1
	}
	return 0
}
