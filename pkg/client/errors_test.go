package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// The gateway's refusals arrive as *client.Error values a caller branches
// on with errors.Is and reads with errors.As.
func TestErrorsAreTypedValues(t *testing.T) {
	p := newPlatform(t)
	cl := newClient(t, p.URL)
	ctx := ctxFor(t)
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "e1"}, client.WaitApplied()); err != nil {
		t.Fatal(err)
	}

	as := func(t *testing.T, err error, sentinel error, status int, code string) *client.Error {
		t.Helper()
		var ae *client.Error
		if !errors.As(err, &ae) || !errors.Is(err, sentinel) || ae.Status != status || ae.Code != code || ae.Message == "" {
			t.Fatalf("err = %#v, want an *Error %d %s matching %v", err, status, code, sentinel)
		}
		for _, other := range []error{client.ErrInvalid, client.ErrNotFound, client.ErrRejected, client.ErrUnavailable, client.ErrTimeout, client.ErrTooLarge} {
			if !errors.Is(other, sentinel) && errors.Is(err, other) {
				t.Fatalf("%v also matches %v", err, other)
			}
		}
		return ae
	}

	t.Run("404", func(t *testing.T) {
		_, err := cl.Session(ctx, "nobody")
		_ = as(t, err, client.ErrNotFound, 404, "not_found")
		_, err = cl.Context(ctx, "nobody", "")
		_ = as(t, err, client.ErrNotFound, 404, "not_found")
		_, err = cl.Records(ctx, "nobody")
		_ = as(t, err, client.ErrNotFound, 404, "not_found")
		_, err = cl.Replay(ctx, "nobody", client.ReplayPoint{})
		_ = as(t, err, client.ErrNotFound, 404, "not_found")
	})

	t.Run("400 naming the field", func(t *testing.T) {
		for _, c := range []struct {
			cmd   client.Command
			field string
		}{
			{client.Command{Type: events.CmdPrompt}, "text"},
			{client.SetThinkingLevel("max"), "level"},
			{client.Command{Type: "fly"}, "fly"},
			{client.Command{Type: events.CmdPrompt, Text: "x", Images: []events.Image{{Data: "AA==", MimeType: "text/plain"}}}, "images[0].mimeType"},
		} {
			_, err := cl.Send(ctx, "e1", c.cmd, client.WaitApplied())
			ae := as(t, err, client.ErrInvalid, 400, "invalid_request")
			if !strings.Contains(ae.Message, c.field) {
				t.Errorf("%s: message %q does not name %q", c.cmd.Type, ae.Message, c.field)
			}
		}
		_, err := cl.CreateSession(ctx, client.CreateSession{Model: "no-slash"})
		if ae := as(t, err, client.ErrInvalid, 400, "invalid_request"); !strings.Contains(ae.Message, "model") {
			t.Errorf("create: message %q does not name the model", ae.Message)
		}
		_, err = cl.ListSessions(ctx, client.ListSessions{Limit: 5000})
		if ae := as(t, err, client.ErrInvalid, 400, "invalid_parameter"); !strings.Contains(ae.Message, "limit") {
			t.Errorf("list: message %q does not name limit", ae.Message)
		}
	})

	t.Run("409 under wait=applied", func(t *testing.T) {
		long := client.Prompt("wait long")
		if _, err := cl.Send(ctx, "e1", long, client.WaitApplied()); err != nil {
			t.Fatal(err)
		}
		busy := client.Prompt("hello")
		busy.ID = "busy1"
		_, err := cl.Send(ctx, "e1", busy, client.WaitApplied())
		ae := as(t, err, client.ErrRejected, 409, "rejected")
		if ae.Reason != "busy" || ae.CommandID != "busy1" {
			t.Fatalf("rejection reason %q command %q, want busy for busy1", ae.Reason, ae.CommandID)
		}
		if _, err := cl.Send(ctx, "e1", client.Abort(), client.WaitApplied()); err != nil {
			t.Fatalf("abort: %v", err)
		}
	})

	t.Run("413", func(t *testing.T) {
		_, err := cl.Send(ctx, "e1", client.Prompt(strings.Repeat("x", 2<<20)))
		_ = as(t, err, client.ErrTooLarge, 413, "too_large")
	})

	t.Run("refused before sending", func(t *testing.T) {
		for name, err := range map[string]error{
			"session":       second(cl.Session(ctx, "bad id")),
			"send":          second(cl.Send(ctx, "a/b", client.Abort())),
			"command id":    second(cl.CommandStatus(ctx, "e1", "")),
			"export format": cl.Export(ctx, "e1", "xml", nil),
			"import id":     second(cl.Import(ctx, strings.NewReader(""), "x y")),
			"replay point":  second(cl.Replay(ctx, "e1", client.ReplayPoint{Seq: 1, Time: timeNow()})),
		} {
			var ae *client.Error
			if !errors.Is(err, client.ErrInvalid) || errors.As(err, &ae) {
				t.Errorf("%s: %v, want an ErrInvalid that is not from the gateway", name, err)
			}
		}
	})

	t.Run("unreachable", func(t *testing.T) {
		off := newClient(t, "http://127.0.0.1:1")
		err := off.Health(ctx)
		var ae *client.Error
		if err == nil || errors.As(err, &ae) || !strings.Contains(err.Error(), "cannot reach the gateway") {
			t.Fatalf("health of nothing = %v", err)
		}
	})
}

func second[T any](_ T, err error) error { return err }
