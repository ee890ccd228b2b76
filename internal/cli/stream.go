package cli

import (
	"context"

	"github.com/cohort-dev/cohort/internal/sdkproto"
)

// resumeLatest is --resume given without an id: the project's most recent
// session, as --continue.
const resumeLatest = "\x00latest"

func (o *options) validateStream() error {
	switch o.inputFormat {
	case "text", "stream-json":
	default:
		return usageErr("--input-format %q is not one of text, stream-json", o.inputFormat)
	}
	if o.inputFormat == "stream-json" && o.outputFormat != "stream-json" {
		return usageErr("--input-format stream-json needs --output-format stream-json")
	}
	if o.replayUser && o.inputFormat != "stream-json" {
		return usageErr("--replay-user-messages needs --input-format stream-json and --output-format stream-json")
	}
	switch o.permPromptTool {
	case "", "stdio":
	default:
		return usageErr("--permission-prompt-tool %q: only stdio is supported (prompts go to the Agent SDK host); an MCP tool cannot answer them yet", o.permPromptTool)
	}
	if o.permPromptTool == "stdio" && o.inputFormat != "stream-json" {
		return usageErr("--permission-prompt-tool stdio needs --input-format stream-json: the prompts go to the host on stdout and the answers come on stdin")
	}
	if o.permPromptTool != "" && o.cfg.PermissionPromptCommand != "" {
		return usageErr("--permission-prompt-tool and --permission-prompt-command both answer permission prompts; give one")
	}
	if o.promptTimeout < 0 {
		return usageErr("--permission-prompt-timeout must not be negative")
	}
	return nil
}

// runStream serves the Agent SDK's stream-json protocol on stdin and
// stdout until stdin ends.
func runStream(ctx context.Context, inv *Invocation, o *options, args []string) error {
	if len(args) > 0 {
		return usageErr("--input-format stream-json reads the prompts from stdin; drop the prompt argument %q", args[0])
	}
	cfg := o.config(inv)
	cfg.AutoDream = true // a long-lived session: memory consolidates between turns (package dream)
	err := sdkproto.Serve(ctx, inv.Stdin, inv.Stdout, sdkproto.Options{Config: cfg,
		PermissionPrompts: o.permPromptTool == "stdio", PromptTimeout: o.promptTimeout, Replay: o.replayUser})
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}
