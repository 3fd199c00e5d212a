// Command sdk is a Go service's use of Cairn through pkg/client: it
// creates a session, prompts it, prints the agent's output as it streams,
// and reads back the context the model will see next.
//
//	cairn up &
//	go run ./examples/sdk --server http://127.0.0.1:8080 "please list files"
//
// Live events may be lost (the session log is the record), so the program
// also asks the log where its prompt stands when the stream goes quiet,
// and ends the run from there if the stream lost its end. SIGINT stops it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

func main() {
	server := flag.String("server", envOr("CAIRN_SERVER", client.DefaultServer), "gateway URL (env CAIRN_SERVER)")
	model := flag.String("model", "", "model as provider/model (default: the platform's)")
	token := flag.String("token", "", "API key or OIDC token (env CAIRN_TOKEN; `cairn up` writes the admin key to DATA/admin.key)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sdk [--server URL] [--token TOKEN] [--model provider/model] PROMPT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *token == "" {
		*token = os.Getenv("CAIRN_TOKEN")
	}
	cl, err := client.New(*server, client.WithToken(*token))
	if err != nil {
		log.Fatal(err)
	}
	if err := run(ctx, cl, *model, flag.Arg(0), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run drives one prompt on a new session and prints what happens to w.
func run(ctx context.Context, cl *client.Client, model, prompt string, w io.Writer) error {
	s, err := cl.CreateSession(ctx, client.CreateSession{Model: model}, client.WaitApplied())
	if err != nil {
		return fmt.Errorf("create a session: %w", err)
	}
	fmt.Fprintf(w, "session %s\n", s.SessionID)

	// Follow before sending, so the stream sees every event of the prompt.
	ctx, cancel := context.WithCancel(ctx)
	stream, err := cl.FollowEvents(ctx, s.SessionID, client.FollowOptions{})
	if err != nil {
		cancel()
		return err
	}
	items := make(chan item)
	reading := make(chan struct{})
	defer func() {
		cancel()
		stream.Close()
		<-reading // the reader is gone: nothing outlives run
	}()
	go func() {
		defer close(reading)
		for {
			ev, err := stream.Next()
			select {
			case items <- item{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	cmd := client.Prompt(prompt)
	cmd.ID = events.NewID() // ours, to ask the log about it, and to retry safely
	if _, err := cl.Send(ctx, s.SessionID, cmd); err != nil {
		var ae *client.Error
		if errors.As(err, &ae) && errors.Is(err, client.ErrInvalid) {
			return fmt.Errorf("the gateway refused the prompt: %s", ae.Message)
		}
		return err
	}

	var shown strings.Builder // the streamed text of the last assistant message
	quiet := time.NewTimer(5 * time.Second)
	defer quiet.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-quiet.C:
			// No event for a while: the log says whether the run is over.
			st, err := cl.CommandStatus(ctx, s.SessionID, cmd.ID)
			switch {
			case err != nil:
			case st.State == client.StateRejected:
				return fmt.Errorf("prompt refused: %s", st.Reason)
			case st.State == client.StateSettled:
				if st.Message != nil && shown.Len() == 0 {
					fmt.Fprintln(w, st.Message.Content.Text())
				}
				done = true
			}
			quiet.Reset(5 * time.Second)
		case it := <-items:
			if it.err != nil {
				return it.err
			}
			quiet.Reset(5 * time.Second)
			ev := it.ev.Event
			switch ev.Type {
			case events.EvMessageStart:
				shown.Reset()
			case events.EvMessageUpdate:
				if ev.Delta != nil && ev.Delta.Kind == events.DeltaText {
					fmt.Fprint(w, ev.Delta.Delta)
					shown.WriteString(ev.Delta.Delta)
				}
			case events.EvMessageEnd:
				if shown.Len() > 0 {
					fmt.Fprintln(w)
				}
			case events.EvToolExecutionStart:
				fmt.Fprintf(w, "→ %s %s\n", ev.ToolName, ev.Args)
			case events.EvCommandRejected:
				if ev.CommandID == cmd.ID {
					return fmt.Errorf("prompt refused: %s", ev.Error)
				}
			case events.EvAgentEnd:
				done = true
			}
		}
	}

	c, err := cl.Context(ctx, s.SessionID, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "context: %d messages for %s\n", len(c.Messages), c.Model)
	return nil
}

type item struct {
	ev  client.StreamEvent
	err error
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
