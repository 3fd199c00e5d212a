package mcptool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
)

// mcpTool is one tool of one server.
type mcpTool struct {
	c      *client
	remote string // the tool's name on the server
	spec   events.ToolSpec
}

func newTool(c *client, t *mcp.Tool) (*mcpTool, error) {
	name, err := ToolName(c.srv.Name, t.Name)
	if err != nil {
		return nil, err
	}
	params := json.RawMessage(`{"type":"object"}`)
	if t.InputSchema != nil {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: tool %q: input schema: %v", c.srv.Name, t.Name, err)
		}
		params = b
	}
	var obj map[string]any
	if json.Unmarshal(params, &obj) != nil {
		return nil, fmt.Errorf("mcp server %q: tool %q: the input schema is not a JSON object", c.srv.Name, t.Name)
	}
	spec := events.ToolSpec{Name: name, Description: t.Description, Parameters: params,
		Idempotent: c.srv.Idempotent, TimeoutMs: c.srv.CallTimeout.Milliseconds()}
	if spec.Description == "" {
		spec.Description = t.Title
	}
	// Compiled the way calls are checked, so a schema the validator cannot
	// compile is refused at listing, not at the first call; a fresh
	// validator each time, since a server may fix a schema under one name.
	var v tool.Validator
	if err := v.Validate(spec, []byte("{}")); err != nil && !errors.Is(err, tool.ErrInvalidArguments) {
		return nil, fmt.Errorf("mcp server %q: tool %q: the input schema does not compile: %v", c.srv.Name, t.Name, err)
	}
	return &mcpTool{c: c, remote: t.Name, spec: spec}, nil
}

func (t *mcpTool) Spec() events.ToolSpec { return t.spec }

// Execute calls the tool on the server. Every failure is an error result.
func (t *mcpTool) Execute(ctx context.Context, call tool.Call, _ func(tool.Result)) (tool.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, t.c.srv.CallTimeout)
	defer cancel()
	fail := func(format string, args ...any) (tool.Result, error) {
		return tool.Error(fmt.Sprintf("mcp server %q, tool %q: ", t.c.srv.Name, t.remote) + fmt.Sprintf(format, args...)), nil
	}
	s, err := t.c.session(ctx)
	if err != nil {
		return fail("%v", err)
	}
	var args map[string]any
	if len(call.Arguments) > 0 {
		if err := json.Unmarshal(call.Arguments, &args); err != nil {
			return fail("arguments are not a JSON object: %v", err)
		}
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fail("no answer within %s", t.c.srv.CallTimeout)
		}
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return fail("%v", err)
	}
	out := Result(res)
	if out.IsError && len(out.Content) == 0 {
		return fail("the tool reported an error without a message")
	}
	return out, nil
}

// Result maps an MCP tool result to Cairn's: text and images as they are,
// audio, resource links and embedded resources as text naming them,
// structured content as JSON text when there is no other content; the
// text is cut at [MaxResultBytes] in all.
func Result(r *mcp.CallToolResult) tool.Result {
	var out tool.Result
	out.IsError = r.IsError
	budget := MaxResultBytes
	addText := func(s string) {
		if budget <= 0 {
			return
		}
		if len(s) > budget {
			s = s[:budget] + fmt.Sprintf("\n[output cut at %d bytes]", MaxResultBytes)
		}
		budget -= len(s)
		out.Content = append(out.Content, events.TextBlock(s))
	}
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			addText(c.Text)
		case *mcp.ImageContent:
			if len(c.Data) > budget {
				addText(fmt.Sprintf("[image %s of %d bytes left out: over the result limit]", c.MIMEType, len(c.Data)))
				continue
			}
			budget -= len(c.Data)
			out.Content = append(out.Content, events.Block{Type: events.BlockImage, Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *mcp.AudioContent:
			addText(fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			addText(fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Text != "" {
				addText(c.Resource.Text)
			} else {
				addText(fmt.Sprintf("[resource %s, %s, %d bytes]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		default:
			addText(fmt.Sprintf("[%T content left out]", c))
		}
	}
	if len(out.Content) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			addText(string(b))
		}
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil && len(b) <= MaxResultBytes {
			out.Details = b
		}
	}
	if len(out.Content) == 0 && !out.IsError {
		out.Content = []events.Block{events.TextBlock("")}
	}
	return out
}
