package client_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// cutProxy forwards to the gateway and cuts event streams: connection i
// is cut after cuts[i] events (the stream ends cleanly when i is even, and
// is reset in the middle of the next event's block when i is odd).
type cutProxy struct {
	srv  *httptest.Server
	cuts []int

	mu     sync.Mutex
	conns  int
	resume []string // each events request's Last-Event-ID
}

func newCutProxy(t *testing.T, target string, cuts ...int) *cutProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{cuts: cuts}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if !strings.HasSuffix(resp.Request.URL.Path, "/events") {
			return nil
		}
		p.mu.Lock()
		conn := p.conns
		p.conns++
		p.resume = append(p.resume, resp.Request.Header.Get("Last-Event-ID"))
		p.mu.Unlock()
		if conn < len(cuts) {
			resp.Body = &cutBody{up: bufio.NewReader(resp.Body), body: resp.Body, left: cuts[conn], reset: conn%2 == 1}
		}
		return nil
	}
	rp.ErrorLog = log.New(io.Discard, "", 0) // the resets are on purpose
	p.srv = httptest.NewServer(rp)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *cutProxy) resumes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.resume...)
}

type cutBody struct {
	up    *bufio.Reader
	body  io.Closer
	left  int // events still to pass
	reset bool
	out   []byte
	done  bool
}

func (b *cutBody) Read(buf []byte) (int, error) {
	for len(b.out) == 0 {
		if b.done {
			if b.reset {
				return 0, errors.New("connection reset by the test")
			}
			return 0, io.EOF
		}
		var block []byte
		for {
			line, err := b.up.ReadBytes('\n')
			if err != nil {
				return 0, err
			}
			block = append(block, line...)
			if len(line) == 1 {
				break
			}
		}
		if bytes.Contains(block, []byte("\ndata: ")) || bytes.HasPrefix(block, []byte("data: ")) {
			if b.left == 0 {
				b.done = true
				if b.reset {
					b.out = block[:len(block)/2] // half an event, then the reset
				}
				continue
			}
			b.left--
		}
		b.out = block
	}
	n := copy(buf, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *cutBody) Close() error { return b.body.Close() }

// follow reads s until the run's agent_end and returns the events' ids and
// the Live marks seen.
func follow(t *testing.T, s *client.EventStream) (ids []uint64, types []string, marks []client.StreamEvent) {
	t.Helper()
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("next after %d events: %v", len(ids), err)
		}
		if ev.Live {
			marks = append(marks, ev)
			continue
		}
		ids = append(ids, ev.ID)
		types = append(types, ev.Event.Type)
		if ev.Event.Type == events.EvAgentEnd {
			return ids, types, marks
		}
	}
}

// A stream cut twice, once cleanly and once in the middle of an event,
// delivers exactly the events of an uncut one: no gap, no repeat.
func TestFollowResumesWithoutGapsOrRepeats(t *testing.T) {
	p := newPlatform(t)
	ctx := ctxFor(t)
	direct := newClient(t, p.URL)
	if _, err := direct.CreateSession(ctx, client.CreateSession{ID: "f1"}, client.WaitApplied()); err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, p.URL, 3, 4)
	cut := newClient(t, proxy.srv.URL)

	whole, err := direct.FollowEvents(ctx, "f1", client.FollowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	broken, err := cut.FollowEvents(ctx, "f1", client.FollowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer broken.Close()
	start := broken.LastID()
	if _, err := direct.Send(ctx, "f1", client.Prompt("stream please")); err != nil {
		t.Fatal(err)
	}
	want, wantTypes, _ := follow(t, whole)
	got, _, marks := follow(t, broken)
	if len(want) < 10 {
		t.Fatalf("the run made %d events (%v); the test needs more than the cuts", len(want), wantTypes)
	}
	if !equal(got, want) {
		t.Fatalf("through the cut stream: %v\nuncut: %v", got, want)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("ids do not grow: %v", got)
		}
	}
	if broken.Reconnects() != 2 || broken.LastID() != want[len(want)-1] || start >= want[0] {
		t.Fatalf("reconnects %d, last id %d (want 2, %d), start %d", broken.Reconnects(), broken.LastID(), want[len(want)-1], start)
	}
	r := proxy.resumes()
	if len(r) != 3 || r[0] != "" || r[1] != itoa(got[2]) || r[2] != itoa(got[6]) {
		t.Fatalf("Last-Event-ID of the event requests = %q, want none, then %d, then %d", r, got[2], got[6])
	}
	// The fresh stream's live mark, then one for each resumed connection
	// that reached its live part; the last one reaches it after the run
	// if its replay held the run's end.
	if len(marks) < 3 {
		ev, err := broken.Next()
		if err != nil {
			t.Fatal(err)
		}
		marks = append(marks, ev)
	}
	if marks[0].Resumed {
		t.Fatalf("the fresh stream's live mark says resumed")
	}
	for _, m := range marks[1:] {
		if !m.Live || !m.Resumed {
			t.Fatalf("after a reconnect: %+v, want a live mark saying resumed", m)
		}
	}

	// A stream that replays from the start holds the same events after the
	// position the others started at.
	replay, err := direct.FollowEvents(ctx, "f1", client.FollowOptions{Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Close()
	all, _, _ := follow(t, replay)
	var after []uint64
	for _, id := range all {
		if id > start {
			after = append(after, id)
		}
	}
	if !equal(after, want) {
		t.Fatalf("replayed from the start: %v, want %v after %d", all, want, start)
	}
}

// Close ends a blocked Next with ErrClosed; cancelling the context ends it
// with the context's error; a stream the gateway refuses is an *Error, a
// missing session's ErrNotFound.
func TestFollowEndsOnCloseAndCancel(t *testing.T) {
	p := newPlatform(t)
	cl := newClient(t, p.URL)
	ctx := ctxFor(t)
	if _, err := cl.FollowEvents(ctx, "quiet", client.FollowOptions{}); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("follow of a missing session = %v, want ErrNotFound", err)
	}
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "quiet"}); err != nil {
		t.Fatal(err)
	}
	s, err := cl.FollowEvents(ctx, "quiet", client.FollowOptions{}) // a create stored is enough
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Next(); err != nil || !ev.Live {
		t.Fatalf("first item = %+v %v, want the live mark", ev, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Next()
		done <- err
	}()
	s.Close()
	if err := <-done; !errors.Is(err, client.ErrClosed) {
		t.Fatalf("next after close = %v, want ErrClosed", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	s2, err := cl.FollowEvents(cctx, "quiet", client.FollowOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	go func() {
		_, err := s2.Next() // the live mark
		if err == nil {
			_, err = s2.Next()
		}
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("next after cancel = %v, want context.Canceled", err)
	}

	var ae *client.Error
	if _, err := cl.FollowEvents(ctx, "bad id", client.FollowOptions{}); !errors.Is(err, client.ErrInvalid) || errors.As(err, &ae) {
		t.Fatalf("follow of a bad id = %v", err)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
