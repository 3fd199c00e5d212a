package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/sandbox/internal/child"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/tools"
)

// init finishes what internal/child began: in a child started for a file
// tool it confines the process, runs the tool and exits.
func init() {
	if child.Pending != nil {
		os.Exit(runTool(*child.Pending))
	}
}

// runTool confines the process, runs one built-in tool in Go and writes its
// result to stdout.
func runTool(req child.Request) int {
	var call tool.Call
	if err := json.Unmarshal(req.Call, &call); err != nil {
		return child.Fail(fmt.Errorf("tool: decode the call: %w", err))
	}
	if err := child.Apply(req); err != nil {
		return child.Fail(err)
	}
	var opts []tools.Option
	if req.Lines > 0 {
		opts = append(opts, tools.WithOutputLimit(req.Lines, req.Bytes))
	}
	var resp child.Response
	set, err := tools.New(req.Workspace, opts...)
	if err == nil {
		defer func() { _ = set.Close() }() // a directory handle
		t, ok := set.Get(req.Tool)
		if !ok {
			err = fmt.Errorf("no built-in tool %q", req.Tool)
		} else {
			call.Workspace = ""
			var res tool.Result
			if res, err = t.Execute(context.Background(), call, nil); err == nil {
				resp.Result, err = json.Marshal(res)
			}
		}
	}
	if err != nil {
		resp.Error = err.Error()
		switch {
		case errors.Is(err, tools.ErrOutside):
			resp.Kind = kindOutside
		case errors.Is(err, events.ErrInvalid):
			resp.Kind = kindInvalid
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		return child.Fail(fmt.Errorf("write the result: %w", err))
	}
	return 0
}
