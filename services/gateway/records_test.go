package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

type recordLine struct {
	Seq   uint64          `json:"seq"`
	Entry json.RawMessage `json:"entry"`
}

func getRecords(t *testing.T, f *fixture, sid string) (int, []recordLine, string) {
	t.Helper()
	resp, err := f.hc.Get(f.url + "/v1/sessions/" + sid + "/records")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return resp.StatusCode, nil, string(body)
	}
	var lines []recordLine
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var l recordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return resp.StatusCode, lines, string(body)
}

// The records route relays the stream's stored bytes: their digests chain,
// a snapshot does not hide an entry removed from the stream, and a stored
// entry that does not decode is answered as corrupt.
func TestRecordsAreTheStoredBytesFromTheStream(t *testing.T) {
	f, log := newLogFixture(t)
	ctx := context.Background()
	s, err := session.Create(ctx, log, events.Entry{ID: "r1", Model: "scripted/demo", Cwd: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"one", "two", "three"} {
		m := events.Message{Role: events.RoleUser, Content: events.TextContent(text), Timestamp: int64(i + 1)}
		if _, err := s.Append(ctx, events.Entry{Type: events.EntryMessage, Message: &m}); err != nil {
			t.Fatal(err)
		}
	}
	code, lines, body := getRecords(t, f, "r1")
	if code != 200 || len(lines) != 4 {
		t.Fatalf("records = %d %s", code, body)
	}
	want := s.Records()
	for i, l := range lines {
		if l.Seq != want[i].Seq || !bytes.Equal(l.Entry, want[i].Data) {
			t.Fatalf("record %d = %d %s, want %d %s", i, l.Seq, l.Entry, want[i].Seq, want[i].Data)
		}
		if i > 0 {
			e, err := events.DecodeEntry(l.Entry)
			if err != nil || e.ParentDigest != session.Digest(lines[i-1].Entry) {
				t.Fatalf("record %d: parent digest %q does not chain to the bytes before it (%v)", i, e.ParentDigest, err)
			}
		}
	}

	// A snapshot holds every entry; the stream loses one: the route shows the gap.
	if err := log.WriteSnapshot(ctx, events.DefaultRef("r1"), s.Records()); err != nil {
		t.Fatal(err)
	}
	st, err := f.js.Stream(ctx, f.n.SessionsStream())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, want[2].Seq); err != nil {
		t.Fatal(err)
	}
	if code, lines, body := getRecords(t, f, "r1"); code != 200 || len(lines) != 3 || lines[2].Seq != want[3].Seq {
		t.Fatalf("records after a removal = %d %s, want the 3 entries left on the stream", code, body)
	}

	// Bytes that are not an entry are refused as corrupt, naming the sequence.
	if _, err := f.js.Publish(ctx, f.n.SessionSubject(events.DefaultRef("r1")), []byte(`{"type":"message","id":`)); err != nil {
		t.Fatal(err)
	}
	if code, _, body := getRecords(t, f, "r1"); code != 422 || !strings.Contains(body, `"code":"corrupt"`) || !strings.Contains(body, "sequence") {
		t.Fatalf("records of a corrupt log = %d %s", code, body)
	}

	for path, want := range map[string]int{
		"/v1/sessions/nobody/records":   404,
		"/v1/sessions/r1/records?x=1":   400,
		"/v1/sessions/bad%20id/records": 400,
	} {
		if code, out := f.do(t, "GET", path, ""); code != want || errMsg(out) == "" {
			t.Errorf("%s = %d %v, want %d with a message", path, code, out, want)
		}
	}
}
