// Package toolchild is the second part of a sandbox child started for a
// file tool (read, write, edit, grep, find, ls): internal/child's init has
// read the request and left it in [child.Pending]; this package's init
// confines the process, runs the tool's Go code, writes the result to
// stdout and exits. Its imports are pkg/tools and what that needs, nothing
// of pkg/sandbox's own (prometheus, the proxy), so its init comes as soon
// as pkg/tools is ready rather than after every package pkg/sandbox
// imports; see pkg/sandbox's doc for what still comes before it.
package toolchild

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
// tool it confines the process, runs the tool and exits. A child started
// ahead of its call (child.ArgWarmTool) reads its request here.
func init() {
	if child.Pending != nil {
		os.Exit(runTool(*child.Pending))
	}
	req, ok, err := child.WarmTool()
	if !ok {
		return
	}
	if err != nil {
		os.Exit(child.Fail(err))
	}
	os.Exit(runTool(req))
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
			resp.Kind = child.KindOutside
		case errors.Is(err, events.ErrInvalid):
			resp.Kind = child.KindInvalid
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		return child.Fail(fmt.Errorf("write the result: %w", err))
	}
	return 0
}
