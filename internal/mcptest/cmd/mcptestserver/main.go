// Command mcptestserver is package mcptest's server on stdio. With -silent
// it reads its input and never answers (a server that hangs at start-up).
package main

import (
	"context"
	"flag"
	"io"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/internal/mcptest"
)

func main() {
	silent := flag.Bool("silent", false, "read stdin and never answer")
	flag.Parse()
	if *silent {
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	}
	if err := mcptest.NewServer(nil).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
