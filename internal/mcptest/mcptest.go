// Package mcptest is the MCP server of Cairn's tests, written on the
// official SDK's server side, run as a child process of a test binary
// (internal/kittest's Command, with [Serve] as the child's body): over
// stdio, or over streamable HTTP when MCPTEST_HTTP=1 (it prints its URL on
// stdout; MCPTEST_TOKEN makes it require that bearer token);
// MCPTEST_HANG=1 makes it never answer. Its tools exercise what a client
// must survive: errors (fail), time-outs (sleep), a crash mid-call
// (crash), a flood of output (flood), images (image), a tool list that
// changes (grow adds extra), a name (bad.name) and a schema (broken) Cairn
// refuses; echo and pid answer plainly.
//
// Like net/http/httptest, it is imported only by tests.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve runs the server as the environment says and returns the exit code.
func Serve() int {
	if os.Getenv("MCPTEST_HANG") != "" {
		select {}
	}
	s := newServer()
	if os.Getenv("MCPTEST_HTTP") == "" {
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Print(err)
			return 1
		}
		return 0
	}
	token := os.Getenv("MCPTEST_TOKEN")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Print(err)
		return 1
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	log.Print(err)
	return 1
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "cairn-test", Version: "1"}, nil)
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	args := func(r *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(r.Params.Arguments, &m)
		return m
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo text back", InputSchema: obj(`"text":{"type":"string"}`)},
		func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(args(r)["text"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "pid", Description: "The server's process id", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(os.Getpid())), nil
		})
	s.AddTool(&mcp.Tool{Name: "image", Description: "A tiny PNG", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a dot"},
				&mcp.ImageContent{Data: []byte("\x89PNG\r\n\x1a\nfake"), MIMEType: "image/png"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Reports an error", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("disk on fire")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "sleep", Description: "Sleeps ms milliseconds", InputSchema: obj(`"ms":{"type":"number"}`)},
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms, _ := args(r)["ms"].(float64)
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-ctx.Done():
			}
			return text("slept"), nil
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exits mid-call", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "flood", Description: "Returns 1 MiB of text", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strings.Repeat("x", 1<<20)), nil
		})
	s.AddTool(&mcp.Tool{Name: "grow", Description: "Adds the tool extra", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(&mcp.Tool{Name: "extra", Description: "Added later", InputSchema: obj(``)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("extra!"), nil })
			return text("grown"), nil
		})
	s.AddTool(&mcp.Tool{Name: "bad.name", Description: "A name Cairn cannot take", InputSchema: obj(``)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("?"), nil })
	s.AddTool(&mcp.Tool{Name: "broken", Description: "A schema that does not compile", InputSchema: obj(`"x":{"type":"nonsense"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("?"), nil })
	return s
}
