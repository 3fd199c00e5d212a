package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// An entry stored across lines before entries were compacted where they
// enter: /records and the jsonl export write it on one line, and /records
// carries its exact stored bytes, whose digest its child recorded. The
// arguments compact to as many bytes as they are stored in (three bytes of
// whitespace out, a raw U+2028 escaped: three in), so only a comparison of
// the bytes, not of their lengths, tells that they differ.
func TestEntryStoredAcrossLinesIsOneLineOut(t *testing.T) {
	f, log := newLogFixture(t)
	ctx := context.Background()
	s, err := session.Create(ctx, log, events.Entry{ID: "ml", Model: "scripted/demo", Cwd: "ml"})
	if err != nil {
		t.Fatal(err)
	}
	head := s.Records()[0]
	old := []byte("{\"v\":1,\"type\":\"approval_requested\",\"id\":\"a1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"parentDigest\":\"" +
		head.Digest + "\",\"toolCallId\":\"c1\",\"toolName\":\"bash\",\"arguments\":{\"command\":\"echo hi\u2028\",\n  \"z\":1}}")
	child := []byte(`{"v":1,"type":"leaf","id":"l1","parentId":"a1","timestamp":"2026-01-01T00:00:00.000Z","parentDigest":"` + session.Digest(old) + `","targetId":"a1"}`)
	for _, b := range [][]byte{old, child} {
		if _, err := f.js.Publish(ctx, f.n.SessionSubject(events.DefaultRef("ml")), b); err != nil {
			t.Fatal(err)
		}
	}

	resp, err := f.hc.Get(f.url + "/v1/sessions/ml/records")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var stored [][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var l struct {
			Entry  json.RawMessage `json:"entry"`
			Stored string          `json:"stored"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("records line %q: %v", sc.Text(), err)
		}
		data := []byte(l.Entry)
		if l.Stored != "" {
			if data, err = base64.StdEncoding.DecodeString(l.Stored); err != nil {
				t.Fatal(err)
			}
		}
		stored = append(stored, data)
	}
	if len(stored) != 3 || !bytes.Equal(stored[1], old) {
		t.Fatalf("records = %s, want 3 lines, the second's stored bytes those published", body)
	}
	if e, err := events.DecodeEntry(stored[2]); err != nil || e.ParentDigest != session.Digest(stored[1]) {
		t.Fatalf("the child's parent digest does not chain to the stored bytes (%v)", err)
	}

	resp, err = f.hc.Get(f.url + "/v1/sessions/ml/export?format=jsonl")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	n := 0
	for sc = bufio.NewScanner(bytes.NewReader(body)); sc.Scan(); n++ {
		if _, err := events.DecodeEntry(sc.Bytes()); err != nil {
			t.Fatalf("export line %d %q: %v", n+1, sc.Text(), err)
		}
	}
	if n != 3 {
		t.Fatalf("export = %s, want 3 lines", body)
	}
}
