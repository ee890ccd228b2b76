package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// SDK-hosted MCP servers: the host names them in initialize
// (sdkMcpServers) and serves them itself; every JSON-RPC message for one
// travels as an mcp_message control request ({server_name, message}), and
// the host's control response carries the server's answer in
// mcp_response. A bridge is the go-sdk Transport the session's MCP client
// uses for such a server.

// mcpCallTimeout bounds one message's round trip through the host (the
// session's MCP timeouts bound the calls themselves).
const mcpCallTimeout = 10 * time.Minute

type bridge struct {
	srv  *server
	name string
}

func (b bridge) Connect(ctx context.Context) (sdkmcp.Connection, error) {
	return &bridgeConn{b: b, in: make(chan jsonrpc.Message, 16), closed: make(chan struct{})}, nil
}

// bridgeConn is one connection to a host's server.
type bridgeConn struct {
	b      bridge
	in     chan jsonrpc.Message
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

func (c *bridgeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends msg to the host; a request's answer comes back through
// Read, as if the server had written it.
func (c *bridgeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.closed:
		return errors.New("the connection to the host's MCP server is closed")
	default:
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	body := map[string]any{"subtype": "mcp_message", "server_name": c.b.name, "message": json.RawMessage(data)}
	req, isCall := msg.(*jsonrpc.Request)
	isCall = isCall && req.ID.IsValid()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		askCtx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-c.closed:
				cancel()
			case <-askCtx.Done():
			}
		}()
		raw, err := c.b.srv.host.ask(askCtx, body, mcpCallTimeout)
		if !isCall {
			return // a notification: the host's answer says nothing
		}
		var answer jsonrpc.Message
		if err == nil {
			var out struct {
				MCPResponse json.RawMessage `json:"mcp_response"`
			}
			if err = json.Unmarshal(raw, &out); err == nil {
				answer, err = jsonrpc.DecodeMessage(out.MCPResponse)
			}
		}
		if err != nil {
			answer = &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: fmt.Sprintf("the host's MCP server %s did not answer: %v", c.b.name, err)}}
		}
		select {
		case c.in <- answer:
		case <-c.closed:
		}
	}()
	return nil
}

func (c *bridgeConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	c.wg.Wait()
	return nil
}

func (c *bridgeConn) SessionID() string { return "" }
