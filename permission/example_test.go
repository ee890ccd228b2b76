package permission_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
)

func ExampleChecker_Check() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	env := settings.Env{Home: filepath.Join(dir, "home"), Cwd: filepath.Join(dir, "proj")}
	os.MkdirAll(env.Cwd, 0o755)

	c, err := permission.New(permission.Config{
		Env:   env,
		Allow: permission.SplitRules("Bash(git diff:*) Bash(npm run test:*)"),
		Deny:  permission.SplitRules("Bash(rm:*)"),
	})
	if err != nil {
		panic(err)
	}
	for _, cmd := range []string{"git diff --stat", "npm run test && git diff", "git diff; rm -rf /", "bash -c 'rm -rf x'", "make"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		d := c.Check(context.Background(), permission.Request{Tool: "Bash", Input: in})
		fmt.Printf("%-26s %s\n", cmd, d.Behavior)
	}
	// Output:
	// git diff --stat            allow
	// npm run test && git diff   allow
	// git diff; rm -rf /         deny
	// bash -c 'rm -rf x'         deny
	// make                       ask
}

func ExampleSplitRules() {
	fmt.Printf("%q\n", permission.SplitRules("Bash(npm run test:*), Read Edit(./src/**)"))
	// Output: ["Bash(npm run test:*)" "Read" "Edit(./src/**)"]
}

func ExampleIsReadOnlyCommand() {
	for _, cmd := range []string{"git log -5 | head", "sort -o out.txt in.txt", "find . -name '*.go'", "find . -delete"} {
		fmt.Println(cmd, permission.IsReadOnlyCommand(cmd))
	}
	// Output:
	// git log -5 | head true
	// sort -o out.txt in.txt false
	// find . -name '*.go' true
	// find . -delete false
}
