package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// exampleGateway starts a platform for an example, as `cairn up` would run
// it, and returns its URL and how to stop it.
func exampleGateway() (string, func()) {
	dir, err := os.MkdirTemp("", "cairn-example-")
	if err != nil {
		panic(err)
	}
	p, err := startPlatform(dir)
	if err != nil {
		panic(err)
	}
	return p.URL, func() {
		if err := errors.Join(p.stop(), os.RemoveAll(dir)); err != nil {
			panic(err)
		}
	}
}

// A session prompted, its run followed as it streams, its context read.
func Example() {
	server, stop := exampleGateway()
	defer stop()
	ctx := context.Background()

	cl, err := client.New(server, client.WithToken(adminToken.Reveal()))
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := cl.CreateSession(ctx, client.CreateSession{ID: "example"}, client.WaitApplied())
	if err != nil {
		fmt.Println(err)
		return
	}
	// Open the stream before sending: it then sees every event of the run.
	stream, err := cl.FollowEvents(ctx, s.SessionID, client.FollowOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stream.Close()
	if _, err := cl.Send(ctx, s.SessionID, client.Prompt("please list files")); err != nil {
		fmt.Println(err)
		return
	}
	for done := false; !done; {
		ev, err := stream.Next()
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Event.Type {
		case events.EvToolExecutionStart:
			fmt.Println("tool:", ev.Event.ToolName)
		case events.EvMessageEnd:
			if m := ev.Event.Message; m.Role == events.RoleAssistant && m.Content.Text() != "" {
				fmt.Println("answer:", m.Content.Text())
			}
		case events.EvAgentEnd:
			done = true
		}
	}
	c, err := cl.Context(ctx, s.SessionID, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range c.Messages {
		fmt.Println(m.Role)
	}
	// Output:
	// tool: ls
	// answer: I see the files.
	// user
	// assistant
	// toolResult
	// assistant
}

// A command the orchestrator refuses is an *Error naming the reason.
func ExampleError() {
	server, stop := exampleGateway()
	defer stop()
	ctx := context.Background()
	cl, _ := client.New(server, client.WithToken(adminToken.Reveal()))
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "idle"}, client.WaitApplied()); err != nil {
		panic(err)
	}

	_, err := cl.Send(ctx, "idle", client.Abort(), client.WaitApplied())
	var ae *client.Error
	if errors.As(err, &ae) && errors.Is(err, client.ErrRejected) {
		fmt.Println(ae.Status, ae.Message)
	}
	_, err = cl.Session(ctx, "nobody")
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// 409 nothing to abort: the session is idle
	// true
}

// Checking a session's hash chain from what the gateway relays.
func ExampleClient_VerifySession() {
	server, stop := exampleGateway()
	defer stop()
	ctx := context.Background()
	cl, _ := client.New(server, client.WithToken(adminToken.Reveal()))
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "audited"}, client.WaitApplied()); err != nil {
		panic(err)
	}
	if _, err := cl.Send(ctx, "audited", client.SetThinkingLevel("low"), client.WaitApplied()); err != nil {
		panic(err)
	}

	v, err := cl.VerifySession(ctx, "audited")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.OK(), v.Entries)
	// Output: true 2
}
