package tmux_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/cohort-dev/cohort/tmux"
)

// A lead inside tmux puts a teammate in a pane beside its own, and later
// checks on it.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !tmux.Inside(os.Getenv) {
		return // use the in-process backend instead
	}
	srv, err := tmux.Current(ctx, os.Getenv)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(ctx)
	pane, err := srv.SplitPane(ctx, tmux.PaneSpec{
		Argv:       []string{"cohort", "teammate", "--team", "demo", "--name", "alice"},
		Env:        map[string]string{"COHORT_HOME": "/home/me/.cohort"},
		Cwd:        "/home/me/project",
		Title:      "alice",
		Horizontal: true,
		Layout:     tmux.MainVertical,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if alive, _ := srv.Alive(ctx, pane.ID); !alive {
		screen, _ := srv.Capture(ctx, pane.ID, 50)
		fmt.Println("alice died:\n" + screen)
		_ = srv.Kill(ctx, pane.ID)
	}
}

// A headless run starts a private server that Close removes again.
func ExampleStartServer() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := tmux.StartServer(ctx, tmux.ServerConfig{Socket: "/run/user/1000/cohort-tmux.sock"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close(ctx)
	fmt.Println("watch with: tmux -S", srv.Socket(), "attach")
}
