package client_test

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// VerifySession checks the chain on the client's side of the wire, from
// the bytes the stream stores: an entry removed from the stream, and bytes
// that are no entry, are found.
func TestVerifySessionFindsWhatWasDoneToTheStream(t *testing.T) {
	p := newPlatform(t)
	cl := newClient(t, p.URL)
	ctx := ctxFor(t)
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "v1"}, client.WaitApplied()); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		cmd := client.Prompt(text)
		cmd.ID = "p-" + text
		if _, err := cl.Send(ctx, "v1", cmd, client.WaitApplied()); err != nil {
			t.Fatal(err)
		}
		settled(t, cl, "v1", cmd.ID)
	}
	v, err := cl.VerifySession(ctx, "v1")
	// header, then each prompt's user message and reply, with the system
	// prompt recorded once, before the first reply
	if err != nil || !v.OK() || v.Entries != 6 {
		t.Fatalf("intact log: %+v %v", v, err)
	}

	recs, err := cl.Records(ctx, "v1")
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.JS.Stream(ctx, events.Names{}.SessionsStream())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, recs[2].Seq); err != nil {
		t.Fatal(err)
	}
	v, err = cl.VerifySession(ctx, "v1")
	if err != nil || v.OK() || v.Entries != 5 || v.Problems[0].Kind != client.ProblemRemoved || v.Problems[0].EntryID != recs[3].Entry.ID {
		t.Fatalf("after removing sequence %d: %+v %v", recs[2].Seq, v, err)
	}

	if _, err := p.JS.Publish(ctx, events.Names{}.SessionSubject(events.DefaultRef("v1")), []byte(`{"type":"message"`)); err != nil {
		t.Fatal(err)
	}
	v, err = cl.VerifySession(ctx, "v1")
	if err != nil || len(v.Problems) != 1 || v.Problems[0].Kind != client.ProblemCorrupt || !strings.Contains(v.Problems[0].Detail, "sequence") {
		t.Fatalf("with bytes that are no entry: %+v %v", v, err)
	}

	// Verify also finds records that are not the named session's.
	good, err := cl.Records(ctx, "v1-none")
	if err == nil || good != nil {
		t.Fatalf("records of no session = %v %v", good, err)
	}
	if v := client.Verify("other", recs[:2]); len(v.Problems) != 1 || v.Problems[0].Kind != client.ProblemHeader {
		t.Fatalf("records of v1 checked as another session: %+v", v)
	}
}
