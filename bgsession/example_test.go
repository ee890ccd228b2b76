package bgsession_test

import (
	"context"
	"fmt"
	"os"

	"github.com/cohort-dev/cohort/bgsession"
)

// The library's view of the background sessions of this machine: list
// the live ones and stop one by a part of its name.
func Example() {
	home, _ := os.MkdirTemp("", "cohort-home")
	defer os.RemoveAll(home)
	reg, err := bgsession.Open(home)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	live, problems := reg.Sessions(ctx, false)
	for _, p := range problems {
		fmt.Println("skipped:", p)
	}
	for _, s := range live {
		fmt.Println(s.ID, s.Name, s.State, s.Status)
	}
	if s, err := bgsession.Find(live, "docs"); err == nil {
		_ = reg.Stop(ctx, s, false)
	}
	fmt.Println(len(live), "running")
	// Output: 0 running
}
