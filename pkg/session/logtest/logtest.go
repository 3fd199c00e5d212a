// Package logtest is the conformance suite every [session.Log]
// implementation must pass: per-session and global order, optimistic
// concurrency, idempotent retries, large entries and the hash chain.
//
// # Concurrency
//
// Subtests use their own session ids, so one log (one stream) may serve the
// whole suite; they run one after another.
package logtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// Suite describes the log under test.
type Suite struct {
	// New returns the log a subtest uses. Logs may share storage.
	New func(t *testing.T) session.Log
	// Between, if set, runs after each subtest with the name of the next:
	// a cluster test kills a node here to prove the suite passes through
	// a failover.
	Between func(t *testing.T, next string)
	// Timeout bounds each subtest (default 60s).
	Timeout time.Duration
}

// Run runs every conformance test against s.
func Run(t *testing.T, s Suite) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(context.Context, *testing.T, session.Log)
	}{
		{"PerSessionOrder", testPerSessionOrder},
		{"GlobalOrder", testGlobalOrder},
		{"StaleExpectConflicts", testStaleExpect},
		{"ConcurrentWritersOneWins", testConcurrentWriters},
		{"RetryAfterLostAck", testRetry},
		{"LargeEntries", testLarge},
		{"HashChain", testHashChain},
		{"WatchSession", testWatchSession},
		{"TenantsScopeIDs", testTenantsScopeIDs},
		{"BadInput", testBadInput},
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	for i, tc := range tests {
		if i > 0 && s.Between != nil {
			s.Between(t, tc.name)
		}
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			tc.fn(ctx, t, s.New(t))
		})
	}
}

var idSeq struct {
	sync.Mutex
	n int
}

// SessionID returns a session id unique in this process run, with a random
// part so that logs on shared storage do not collide across runs.
func SessionID(prefix string) string {
	idSeq.Lock()
	defer idSeq.Unlock()
	idSeq.n++
	return fmt.Sprintf("%s-%d-%s", prefix, idSeq.n, events.NewID()[:8])
}

// Session returns a session of the default tenant whose id is
// [SessionID](prefix).
func Session(prefix string) events.SessionRef { return events.DefaultRef(SessionID(prefix)) }

// UserEntry returns a user message entry with id and parent (nil if "").
func UserEntry(id, parent, text string) events.Entry {
	e := events.Entry{
		Type:      events.EntryMessage,
		ID:        id,
		Timestamp: events.FormatTime(time.Unix(1700000000, 0)),
		Message:   &events.Message{Role: events.RoleUser, Content: events.TextContent(text)},
	}
	if parent != "" {
		e.ParentID = &parent
	}
	return e
}

// AppendChain appends n linked user entries to sid after last (the record
// of the session's last entry, or nil for an empty session), each carrying
// its parent's digest, and returns their records.
func AppendChain(ctx context.Context, t testing.TB, l session.Log, sid events.SessionRef, last *session.Record, n int) []session.Record {
	t.Helper()
	var out []session.Record
	for i := 0; i < n; i++ {
		var expect uint64
		parent, digest := "", ""
		if last != nil {
			expect, parent, digest = last.Seq, last.Entry.ID, last.Digest
		}
		e := UserEntry(fmt.Sprintf("e%d-%s", i, events.NewID()[:6]), parent, fmt.Sprintf("entry %d of %s", i, sid))
		e.ParentDigest = digest
		rec, err := l.Append(ctx, sid, expect, e)
		if err != nil {
			t.Fatalf("append %d to %s: %v", i, sid, err)
		}
		out = append(out, rec)
		last = &out[len(out)-1]
	}
	return out
}

func read(ctx context.Context, t *testing.T, l session.Log, sid events.SessionRef) []session.Record {
	t.Helper()
	recs, err := l.Read(ctx, sid, 0)
	if err != nil {
		t.Fatalf("read %s: %v", sid, err)
	}
	return recs
}

func ids(recs []session.Record) string {
	var b strings.Builder
	for i, r := range recs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.Entry.ID)
	}
	return b.String()
}

func testPerSessionOrder(ctx context.Context, t *testing.T, l session.Log) {
	a, b := Session("order-a"), Session("order-b")
	var wantA, wantB []session.Record
	var lastA, lastB *session.Record
	for i := 0; i < 5; i++ {
		wantA = append(wantA, AppendChain(ctx, t, l, a, lastA, 1)...)
		lastA = &wantA[len(wantA)-1]
		wantB = append(wantB, AppendChain(ctx, t, l, b, lastB, 2)...)
		lastB = &wantB[len(wantB)-1]
	}
	for _, c := range []struct {
		sid  events.SessionRef
		want []session.Record
	}{{a, wantA}, {b, wantB}} {
		got := read(ctx, t, l, c.sid)
		if ids(got) != ids(c.want) {
			t.Fatalf("session %s read %s, want %s", c.sid, ids(got), ids(c.want))
		}
		for i := range got {
			if got[i].Seq != c.want[i].Seq || got[i].Session != c.sid || got[i].Digest != c.want[i].Digest {
				t.Fatalf("record %d of %s = seq %d %s %s, appended as seq %d %s", i, c.sid, got[i].Seq, got[i].Session, got[i].Digest, c.want[i].Seq, c.want[i].Digest)
			}
			if i > 0 && got[i].Seq <= got[i-1].Seq {
				t.Fatalf("sequences of %s do not grow: %d then %d", c.sid, got[i-1].Seq, got[i].Seq)
			}
		}
		// Reading from a sequence gives the suffix.
		from, err := l.Read(ctx, c.sid, c.want[3].Seq)
		if err != nil {
			t.Fatal(err)
		}
		if ids(from) != ids(c.want[3:]) {
			t.Fatalf("read %s from %d = %s, want %s", c.sid, c.want[3].Seq, ids(from), ids(c.want[3:]))
		}
	}
	if got := read(ctx, t, l, Session("order-empty")); len(got) != 0 {
		t.Fatalf("an unknown session read %d records, want none", len(got))
	}
}

func testGlobalOrder(ctx context.Context, t *testing.T, l session.Log) {
	sids := []events.SessionRef{Session("global-a"), Session("global-b"), Session("global-c")}
	last := map[events.SessionRef]*session.Record{}
	var appended []session.Record
	for i := 0; i < 9; i++ {
		sid := sids[i%3]
		r := AppendChain(ctx, t, l, sid, last[sid], 1)[0]
		last[sid] = &r
		appended = append(appended, r)
	}
	for i := 1; i < len(appended); i++ {
		if appended[i].Seq <= appended[i-1].Seq {
			t.Fatalf("global sequence does not grow: %d then %d", appended[i-1].Seq, appended[i].Seq)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mine := map[events.SessionRef]bool{sids[0]: true, sids[1]: true, sids[2]: true}
	var got []session.Record
	for r, err := range l.Watch(wctx, events.SessionRef{}, appended[0].Seq) {
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if mine[r.Session] {
			got = append(got, r)
		}
		if len(got) == len(appended) {
			break
		}
	}
	for i := range got {
		if got[i].Seq != appended[i].Seq || got[i].Entry.ID != appended[i].Entry.ID || got[i].Session != appended[i].Session {
			t.Fatalf("watch record %d = %s/%s@%d, appended %s/%s@%d", i, got[i].Session, got[i].Entry.ID, got[i].Seq,
				appended[i].Session, appended[i].Entry.ID, appended[i].Seq)
		}
	}
}

func testStaleExpect(ctx context.Context, t *testing.T, l session.Log) {
	sid := Session("stale")
	recs := AppendChain(ctx, t, l, sid, nil, 3)
	for _, expect := range []uint64{0, recs[1].Seq, recs[2].Seq + 1000} {
		_, err := l.Append(ctx, sid, expect, UserEntry("late-"+events.NewID()[:6], "", "late"))
		if !errors.Is(err, session.ErrConflict) {
			t.Fatalf("append with expect %d (last is %d) = %v, want ErrConflict", expect, recs[2].Seq, err)
		}
	}
	other := Session("stale-empty")
	if _, err := l.Append(ctx, other, recs[2].Seq, UserEntry("x", "", "x")); !errors.Is(err, session.ErrConflict) {
		t.Fatalf("append to an empty session expecting %d = %v, want ErrConflict", recs[2].Seq, err)
	}
	if got := read(ctx, t, l, sid); ids(got) != ids(recs) {
		t.Fatalf("after conflicts the log holds %s, want %s", ids(got), ids(recs))
	}
}

func testConcurrentWriters(ctx context.Context, t *testing.T, l session.Log) {
	sid := Session("race")
	last := AppendChain(ctx, t, l, sid, nil, 1)[0]
	const rounds = 20
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		results := make([]session.Record, 2)
		errs := make([]error, 2)
		start := make(chan struct{})
		for w := 0; w < 2; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := UserEntry(fmt.Sprintf("r%d-w%d-%s", round, w, events.NewID()[:6]), last.Entry.ID, "writer")
				e.ParentDigest = last.Digest
				<-start
				results[w], errs[w] = l.Append(ctx, sid, last.Seq, e)
			}()
		}
		close(start)
		wg.Wait()
		winners := 0
		for w, err := range errs {
			switch {
			case err == nil:
				winners++
				last = results[w]
			case errors.Is(err, session.ErrConflict):
			default:
				t.Fatalf("round %d writer %d: %v", round, w, err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d writers won (errors %v, %v), want exactly 1", round, winners, errs[0], errs[1])
		}
	}
	got := read(ctx, t, l, sid)
	if len(got) != rounds+1 {
		t.Fatalf("log holds %d entries, want %d", len(got), rounds+1)
	}
	if probs := session.VerifyChain(got); len(probs) != 0 {
		t.Fatalf("chain broken after concurrent writers: %v", probs[0])
	}
}

func testRetry(ctx context.Context, t *testing.T, l session.Log) {
	sid := Session("retry")
	first := UserEntry("first", "", "hello")
	r1, err := l.Append(ctx, sid, 0, first)
	if err != nil {
		t.Fatal(err)
	}
	// The ack was lost: the writer sends the same append again.
	r2, err := l.Append(ctx, sid, 0, first)
	if err != nil {
		t.Fatalf("retried append: %v, want the original record", err)
	}
	if r2.Seq != r1.Seq || r2.Digest != r1.Digest {
		t.Fatalf("retried append reported seq %d digest %s, want %d %s", r2.Seq, r2.Digest, r1.Seq, r1.Digest)
	}
	second := UserEntry("second", "first", "again")
	second.ParentDigest = r1.Digest
	r3, err := l.Append(ctx, sid, r1.Seq, second)
	if err != nil {
		t.Fatal(err)
	}
	r4, err := l.Append(ctx, sid, r1.Seq, second)
	if err != nil || r4.Seq != r3.Seq {
		t.Fatalf("retried second append = seq %d, %v; want %d", r4.Seq, err, r3.Seq)
	}
	if got := read(ctx, t, l, sid); ids(got) != "first,second" {
		t.Fatalf("log holds %s, want first,second", ids(got))
	}
}

func testLarge(ctx context.Context, t *testing.T, l session.Log) {
	sid := Session("large")
	img := strings.Repeat("iVBORw0KGgo", 200_000) // ~2.2 MB of base64
	out := strings.Repeat("line of tool output\n", 90_000)
	e := events.Entry{
		Type: events.EntryMessage, ID: "big", Timestamp: events.FormatTime(time.Unix(1700000000, 0)),
		Message: &events.Message{Role: events.RoleToolResult, ToolCallID: "call1", ToolName: "read",
			Content: events.Content{Blocks: []events.Block{
				events.TextBlock("small text stays"),
				{Type: events.BlockImage, Data: img, MimeType: "image/png"},
				events.TextBlock(out),
			}}},
	}
	rec, err := l.Append(ctx, sid, 0, e)
	if err != nil {
		t.Fatalf("append a %d-byte entry: %v", len(img)+len(out), err)
	}
	if len(rec.Data) > 1<<20 {
		t.Fatalf("stored form is %d bytes; large parts should have moved to blobs", len(rec.Data))
	}
	got := read(ctx, t, l, sid)
	if len(got) != 1 {
		t.Fatalf("read %d records, want 1", len(got))
	}
	for _, r := range []session.Record{rec, got[0]} {
		b := r.Entry.Message.Content.Blocks
		if len(b) != 3 || b[0].Text != "small text stays" || b[1].Data != img || b[1].Blob != "" || b[2].Text != out || b[2].Extra != nil {
			t.Fatalf("large entry did not come back whole (blocks %d)", len(b))
		}
	}
	if got[0].Digest != rec.Digest {
		t.Fatalf("read digest %s, appended %s", got[0].Digest, rec.Digest)
	}
	if !strings.Contains(string(got[0].Data), `"blob":"sha256:`) {
		t.Fatalf("stored form has no blob reference: %.200s", got[0].Data)
	}
}

func testHashChain(ctx context.Context, t *testing.T, l session.Log) {
	sid := Session("chain")
	recs := AppendChain(ctx, t, l, sid, nil, 6)
	got := read(ctx, t, l, sid)
	if probs := session.VerifyChain(got); len(probs) != 0 {
		t.Fatalf("intact chain reported: %v", probs[0])
	}
	for i := 1; i < len(got); i++ {
		if got[i].Entry.ParentDigest != got[i-1].Digest || got[i].Digest != recs[i].Digest {
			t.Fatalf("record %d does not chain to %d", i, i-1)
		}
	}
	check := func(name string, recs []session.Record, kind, entryID string) {
		t.Helper()
		probs := session.VerifyChain(recs)
		if len(probs) == 0 {
			t.Fatalf("%s: verifier found nothing", name)
		}
		if probs[0].Kind != kind || probs[0].EntryID != entryID {
			t.Fatalf("%s: verifier said %v, want %s at entry %s", name, probs[0], kind, entryID)
		}
		if !errors.Is(probs[0], session.ErrCorrupt) {
			t.Fatalf("%s: problem does not match ErrCorrupt", name)
		}
	}
	edited := append([]session.Record(nil), got...)
	edited[2].Data = []byte(strings.Replace(string(edited[2].Data), "entry 2", "entry 9", 1))
	check("edited", edited, session.ProblemEdited, got[2].Entry.ID)

	removed := append(append([]session.Record(nil), got[:2]...), got[3:]...)
	check("removed", removed, session.ProblemRemoved, got[3].Entry.ID)

	swapped := append([]session.Record(nil), got...)
	swapped[2], swapped[3] = swapped[3], swapped[2]
	check("reordered", swapped, session.ProblemReordered, got[3].Entry.ID)

	check("head removed", got[1:], session.ProblemRemoved, got[1].Entry.ID)
}

func testWatchSession(ctx context.Context, t *testing.T, l session.Log) {
	sid := Session("watch")
	before := AppendChain(ctx, t, l, sid, nil, 2)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	appended := make(chan []session.Record, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Entries of another session must not show up in the watch.
		AppendChain(ctx, t, l, Session("watch-other"), nil, 1)
		appended <- AppendChain(ctx, t, l, sid, &before[1], 2)
	}()
	var got []session.Record
	for r, err := range l.Watch(wctx, sid, 0) {
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if r.Session != sid {
			t.Fatalf("watch of %s yielded an entry of %s", sid, r.Session)
		}
		got = append(got, r)
		if len(got) == 4 {
			break
		}
	}
	wg.Wait()
	want := append(before, <-appended...)
	if ids(got) != ids(want) {
		t.Fatalf("watch yielded %s, want %s", ids(got), ids(want))
	}
	// Cancelling ends a watch with the context's error.
	cancel()
	var last error
	for _, err := range l.Watch(wctx, sid, want[3].Seq+1) {
		last = err
		if err != nil {
			break
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("a cancelled watch ended with %v, want context.Canceled", last)
	}
}

func testBadInput(ctx context.Context, t *testing.T, l session.Log) {
	for _, sid := range []events.SessionRef{events.DefaultRef(""), events.DefaultRef("has space"), events.DefaultRef("a.b"),
		events.DefaultRef(strings.Repeat("x", 65)), {Tenant: "", ID: "s1"}, {Tenant: "Acme", ID: "s1"}, {Tenant: "a.b", ID: "s1"},
		{Tenant: "a>", ID: "s1"}, {Tenant: strings.Repeat("t", 33), ID: "s1"}} {
		if _, err := l.Append(ctx, sid, 0, UserEntry("ok", "", "x")); !errors.Is(err, events.ErrInvalid) {
			t.Errorf("append to session %q = %v, want an events.ErrInvalid error", sid, err)
		}
		if _, err := l.Read(ctx, sid, 0); !errors.Is(err, events.ErrInvalid) {
			t.Errorf("read of session %q = %v, want an events.ErrInvalid error", sid, err)
		}
	}
	if _, err := l.Append(ctx, Session("bad"), 0, UserEntry("no/slash", "", "x")); !errors.Is(err, events.ErrInvalid) {
		t.Errorf("append of entry id %q = %v, want an events.ErrInvalid error", "no/slash", err)
	}
}

// Session ids are scoped by tenant: acme's and beta's session of one id are
// two sessions, each with its own order and concurrency boundary, and a
// watch of one never yields the other's entries.
func testTenantsScopeIDs(ctx context.Context, t *testing.T, l session.Log) {
	id := SessionID("tenant")
	acme, beta := events.SessionRef{Tenant: "acme", ID: id}, events.SessionRef{Tenant: "beta", ID: id}
	a := AppendChain(ctx, t, l, acme, nil, 2)
	b := AppendChain(ctx, t, l, beta, nil, 3) // expect 0 again: beta's session is empty
	if got := read(ctx, t, l, acme); ids(got) != ids(a) || got[0].Session != acme {
		t.Fatalf("acme's %s read %s, want %s", id, ids(got), ids(a))
	}
	if got := read(ctx, t, l, beta); ids(got) != ids(b) || got[0].Session != beta {
		t.Fatalf("beta's %s read %s, want %s", id, ids(got), ids(b))
	}
	if got := read(ctx, t, l, events.DefaultRef(id)); len(got) != 0 {
		t.Fatalf("the default tenant's %s holds %s, want nothing", id, ids(got))
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	for r, err := range l.Watch(wctx, beta, 0) {
		if err != nil {
			t.Fatalf("watch beta: %v", err)
		}
		if r.Session != beta {
			t.Fatalf("watch of %s yielded %s's entry %s", beta, r.Session, r.Entry.ID)
		}
		if n++; n == len(b) {
			break
		}
	}
}
