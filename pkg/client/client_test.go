package client_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

func newClient(t testing.TB, url string) *client.Client {
	t.Helper()
	cl, err := client.New(url, client.WithToken(adminToken.Reveal()))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// settled waits until the command's run has settled and returns its status.
func settled(t *testing.T, cl *client.Client, sid, cid string) client.CommandStatus {
	t.Helper()
	var st client.CommandStatus
	eventually(t, "command "+cid+" settled", func() (bool, string) {
		var err error
		st, err = cl.CommandStatus(ctxFor(t), sid, cid)
		return err == nil && st.State == client.StateSettled, st.State
	})
	return st
}

func TestNewRefusesWhatIsNotAGateway(t *testing.T) {
	for _, s := range []string{"", "127.0.0.1:8080", "ftp://h/", "http://", "http://h/?x=1"} {
		if _, err := client.New(s); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("New(%q) = %v, want ErrInvalid", s, err)
		}
	}
	if _, err := client.New("http://h", client.WithHeader("Bad Key", "x")); err == nil {
		t.Error("WithHeader accepted a header name with a space")
	}
	if _, err := client.New("http://h", client.WithHTTPClient(nil)); err == nil {
		t.Error("WithHTTPClient accepted nil")
	}
}

// Every method against one platform: sessions, commands of every type,
// their states, and the reads of the log and the read models.
func TestMethodsAgainstARealGateway(t *testing.T) {
	p := newPlatform(t)
	cl := newClient(t, p.URL)
	ctx := ctxFor(t)
	if err := cl.Health(ctx); err != nil {
		t.Fatalf("health: %v", err)
	}

	created, err := cl.CreateSession(ctx, client.CreateSession{ID: "m1", Tools: []string{"ls", "read"}}, client.WaitApplied())
	if err != nil || !created.Applied || created.SessionID != "m1" || created.EntryID != "m1" || created.CommandID == "" {
		t.Fatalf("create = %+v %v", created, err)
	}
	again, err := cl.CreateSession(ctx, client.CreateSession{ID: "m1", Tools: []string{"ls", "read"}}, client.WaitApplied())
	if err != nil || !again.Duplicate || again.Applied || again.CommandID != created.CommandID {
		t.Fatalf("create again = %+v %v, want a duplicate of %s", again, err, created.CommandID)
	}
	stored, err := cl.CreateSession(ctx, client.CreateSession{ID: "m2"})
	if err != nil || stored.Applied || stored.Sequence == 0 {
		t.Fatalf("create without waiting = %+v %v", stored, err)
	}

	// A prompt with a tool call, followed to its end through the log.
	cmd := client.Prompt("please list files")
	cmd.ID = "p1"
	acc, err := cl.Send(ctx, "m1", cmd)
	if err != nil || acc.CommandID != "p1" || acc.Applied {
		t.Fatalf("send = %+v %v", acc, err)
	}
	st := settled(t, cl, "m1", "p1")
	if st.Message == nil || st.Message.Content.Text() != "I see the files." || st.EntryID == "" {
		t.Fatalf("status of p1 = %+v", st)
	}

	// Every other command type, applied.
	ctxNow, err := cl.Context(ctx, "m1", "")
	if err != nil || len(ctxNow.Messages) != 4 || ctxNow.Model != "scripted/test" || ctxNow.Leaf == "" {
		t.Fatalf("context = %+v %v", ctxNow, err)
	}
	userEntry := st.EntryID
	for _, c := range []client.Command{
		client.SetModel("scripted/two"), client.SetThinkingLevel("low"), client.SetTools("ls"),
		client.Label(userEntry, "asked"), client.Navigate(&userEntry), client.Navigate(nil),
		client.Steer("a steer while idle"),
	} {
		a, err := cl.Send(ctx, "m1", c, client.WaitApplied())
		// Navigate(&userEntry) moved the leaf to the first prompt's parent,
		// before the first entry, so Navigate(nil) is a no-op: applied,
		// nothing written.
		wrote := a.EntryID != "" && a.LogSequence != 0
		if err != nil || !a.Applied || wrote == a.NoEffect {
			t.Fatalf("%s = %+v %v, want applied", c.Type, a, err)
		}
		if s, err := cl.CommandStatus(ctx, "m1", a.CommandID); err != nil || (s.State != client.StateApplied && s.State != client.StateRunning && s.State != client.StateSettled) {
			t.Fatalf("status of %s = %+v %v", c.Type, s, err)
		}
	}
	// Refused ones, with the orchestrator's reason.
	for _, c := range []client.Command{client.Abort(), client.Compact(""), client.Label("nope", "x")} {
		_, err := cl.Send(ctx, "m1", c, client.WaitApplied())
		var ae *client.Error
		if !errors.As(err, &ae) || !errors.Is(err, client.ErrRejected) || ae.Status != 409 || ae.Code != "rejected" || ae.Message == "" || ae.CommandID == "" {
			t.Fatalf("%s = %v, want a 409 rejection with its reason", c.Type, err)
		}
		if s, err := cl.CommandStatus(ctx, "m1", ae.CommandID); err != nil || s.State != client.StateRejected || s.Reason != ae.Message {
			t.Fatalf("status of the refused %s = %+v %v", c.Type, s, err)
		}
	}

	// Read models (they trail the log).
	var sum client.Summary
	eventually(t, "m1 projected with its model change", func() (bool, string) {
		sum, err = cl.Session(ctx, "m1")
		return err == nil && sum.Model == "scripted/two" && sum.ThinkingLevel == "low", sum.Model
	})
	if sum.Status != client.StatusIdle && sum.Status != client.StatusRunning || sum.Messages < 4 || sum.ToolCalls != 1 || sum.Tokens.Total == 0 {
		t.Fatalf("summary = %+v", sum)
	}
	eventually(t, "m2 projected", func() (bool, string) {
		_, err := cl.Session(ctx, "m2")
		return err == nil, errString(err)
	})
	page, err := cl.ListSessions(ctx, client.ListSessions{Limit: 1})
	if err != nil || len(page.Sessions) != 1 || page.NextCursor == "" {
		t.Fatalf("first page = %+v %v", page, err)
	}
	var ids []string
	for s, err := range cl.AllSessions(ctx, 1) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "m1,m2" && strings.Join(ids, ",") != "m2,m1" {
		t.Fatalf("all sessions = %v", ids)
	}

	recs, err := cl.Records(ctx, "m1")
	if err != nil || len(recs) < 8 || recs[0].Entry.Type != events.EntrySession {
		t.Fatalf("records = %d %v", len(recs), err)
	}
	var entries []client.Record
	eventually(t, "every entry projected", func() (bool, string) {
		entries = entries[:0]
		for r, err := range cl.AllEntries(ctx, "m1", 3) {
			if err != nil {
				return false, err.Error()
			}
			entries = append(entries, r)
		}
		return len(entries) == len(recs), ""
	})
	for i := range recs {
		if entries[i].Seq != recs[i].Seq || !bytes.Equal(entries[i].Data, recs[i].Data) || entries[i].Digest != recs[i].Digest {
			t.Fatalf("entry %d of the read model differs from the log's record", i)
		}
	}
	if v, err := cl.VerifySession(ctx, "m1"); err != nil || !v.OK() || v.Entries != len(recs) || v.LastDigest != recs[len(recs)-1].Digest {
		t.Fatalf("verify = %+v %v", v, err)
	}

	tree, err := cl.Tree(ctx, "m1")
	if err != nil || tree.Session != "m1" || len(tree.Nodes) != len(recs)-1 {
		t.Fatalf("tree = %+v %v", tree, err)
	}
	labelled := false
	for _, n := range tree.Nodes {
		labelled = labelled || n.ID == userEntry && n.Label == "asked"
	}
	if path := tree.ActivePath(); !labelled || len(path) == 0 || path[len(path)-1] != *tree.Leaf {
		t.Fatalf("tree: label seen %v, active path %v, leaf %v", labelled, path, tree.Leaf)
	}

	var calls client.ToolCallPage
	eventually(t, "the ls call audited", func() (bool, string) {
		calls, err = cl.ToolCalls(ctx, client.ToolCallFilter{Session: "m1", Tool: "ls", Since: time.Now().Add(-time.Hour)})
		return err == nil && len(calls.ToolCalls) == 1 && calls.ToolCalls[0].Outcome == client.OutcomeOK, errString(err)
	})
	u, err := cl.Usage(ctx, client.UsageFilter{Model: "scripted/test"})
	if err != nil || u.Total.Calls < 2 || len(u.Usage) == 0 {
		t.Fatalf("usage = %+v %v", u, err)
	}

	// Replay: the session as it was right after the first tool call's result.
	var at uint64
	for _, r := range recs {
		if r.Entry.Message != nil && r.Entry.Message.Role == events.RoleToolResult {
			at = r.Seq
			break
		}
	}
	rp, err := cl.Replay(ctx, "m1", client.ReplayPoint{Seq: at})
	// header, prompt, system prompt record, tool call, its result
	if err != nil || rp.Summary.LastSeq != at || len(rp.Entries) != 5 || rp.Entries[4].Seq != at || rp.Summary.Status != client.StatusRunning {
		t.Fatalf("replay until %d = %+v (%d entries) %v", at, rp.Summary, len(rp.Entries), err)
	}
	if whole, err := cl.Replay(ctx, "m1", client.ReplayPoint{}); err != nil || len(whole.Entries) != len(recs) {
		t.Fatalf("whole replay = %d entries %v", len(whole.Entries), err)
	}

	// Export and import.
	var pi, jl bytes.Buffer
	if err := cl.Export(ctx, "m1", client.FormatPi, &pi); err != nil || strings.Count(pi.String(), "\n") != len(recs) {
		t.Fatalf("pi export = %d lines %v", strings.Count(pi.String(), "\n"), err)
	}
	if err := cl.Export(ctx, "m1", client.FormatJSONL, &jl); err != nil || !strings.Contains(jl.String(), `"parentDigest":"sha256:`) {
		t.Fatalf("jsonl export %v", err)
	}
	imp, err := cl.Import(ctx, bytes.NewReader(pi.Bytes()), "m1-copy")
	if err != nil || imp.ID != "m1-copy" || imp.Entries == 0 {
		t.Fatalf("import = %+v %v", imp, err)
	}
	var back bytes.Buffer
	if err := cl.Export(ctx, "m1-copy", client.FormatPi, &back); err != nil || strings.Replace(back.String(), `"id":"m1-copy"`, `"id":"m1"`, 1) != pi.String() {
		t.Fatalf("export of the import differs (%v)", err)
	}
	if _, err := cl.Import(ctx, bytes.NewReader(pi.Bytes()), "m1-copy"); !errors.Is(err, client.ErrRejected) {
		t.Fatalf("import over an existing session = %v, want ErrRejected", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
