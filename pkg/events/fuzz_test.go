package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Every decoder is fuzzed for panics and hangs; when it accepts an input, the
// canonical form it gives must be a fixed point: encode → decode → encode
// returns the same bytes. Seeds are the golden files (and the pi sessions);
// crashers found are kept as regression seeds in testdata/fuzz.

// seedFiles adds every file under testdata/golden/<dir> to f's corpus.
func seedFiles(f *testing.F, dir string) [][]byte {
	paths, _ := filepath.Glob(filepath.Join(goldenDir, dir, "*.json"))
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		b = bytes.TrimSpace(b)
		f.Add(b)
		out = append(out, b)
	}
	if len(out) == 0 {
		f.Fatalf("no seeds in %s/%s", goldenDir, dir)
	}
	return out
}

// fixedPoint checks that decode accepts what encode produced from a decoded
// value, and that encoding again changes nothing.
func fixedPoint[T any](t *testing.T, v T, encode func(T) ([]byte, error), decode func([]byte) (T, error)) {
	t.Helper()
	b1, err := encode(v)
	if err != nil {
		t.Fatalf("encode of a decoded value failed: %v", err)
	}
	v2, err := decode(b1)
	if err != nil {
		t.Fatalf("decode of the canonical form %s failed: %v", b1, err)
	}
	b2, err := encode(v2)
	if err != nil {
		t.Fatalf("second encode failed: %v", err)
	}
	if !bytes.Equal(b1, b2) {
		t.Fatalf("encode→decode→encode is not stable:\n1: %s\n2: %s", b1, b2)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	seedFiles(f, "entry")
	f.Add([]byte(`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEntry(data)
		if err != nil {
			return
		}
		fixedPoint(t, e, Entry.MarshalJSON, DecodeEntry)
	})
}

func FuzzMessage(f *testing.F) {
	seedFiles(f, "message")
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if json.Unmarshal(data, &m) != nil {
			return
		}
		fixedPoint(t, m, Message.MarshalJSON, func(b []byte) (Message, error) {
			var m Message
			return m, json.Unmarshal(b, &m)
		})
	})
}

func FuzzBlock(f *testing.F) {
	seedFiles(f, "block")
	f.Fuzz(func(t *testing.T, data []byte) {
		var b Block
		if json.Unmarshal(data, &b) != nil {
			return
		}
		fixedPoint(t, b, Block.MarshalJSON, func(data []byte) (Block, error) {
			var b Block
			return b, json.Unmarshal(data, &b)
		})
	})
}

func FuzzContent(f *testing.F) {
	for _, m := range seedFiles(f, "message") {
		var obj map[string]json.RawMessage
		if json.Unmarshal(m, &obj) == nil && obj["content"] != nil {
			f.Add([]byte(obj["content"]))
		}
	}
	f.Add([]byte(`"plain text"`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Content
		if json.Unmarshal(data, &c) != nil {
			return
		}
		fixedPoint(t, c, Content.MarshalJSON, func(b []byte) (Content, error) {
			var c Content
			return c, json.Unmarshal(b, &c)
		})
	})
}

func FuzzDecodeCommand(f *testing.F) {
	seedFiles(f, "command")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCommand(data)
		if err != nil {
			return
		}
		fixedPoint(t, c, Command.MarshalJSON, DecodeCommand)
	})
}

func FuzzDecodeEvent(f *testing.F) {
	// The golden events with small messages: the fuzzer minimises every new
	// interesting input, which is slow for the large golden messages (those
	// are fuzzed by FuzzMessage).
	asst := Message{Role: RoleAssistant, Content: TextContent("ok"), StopReason: StopEnd}
	res := Message{Role: RoleToolResult, ToolCallID: "t", ToolName: "ls", Content: TextContent("a.go")}
	for _, ev := range exampleEvents() {
		if ev.Message != nil {
			ev.Message = &asst
		}
		if ev.Messages != nil {
			ev.Messages = []Message{asst}
		}
		if ev.ToolResults != nil {
			ev.ToolResults = []Message{res}
		}
		if ev.Partial != nil {
			ev.Partial = &res
		}
		if ev.Result != nil {
			ev.Result = &res
		}
		b, err := ev.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := DecodeEvent(data)
		if err != nil {
			return
		}
		fixedPoint(t, ev, Event.Encode, DecodeEvent)
	})
}

func FuzzDecodeToolCall(f *testing.F) {
	f.Add(readGolden(f, "toolcall.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeToolCall(data)
		if err != nil {
			return
		}
		fixedPoint(t, c, ToolCall.Encode, DecodeToolCall)
	})
}

func FuzzDecodeToolResult(f *testing.F) {
	f.Add(readGolden(f, "toolresult.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeToolResult(data)
		if err != nil {
			return
		}
		fixedPoint(t, r, ToolResult.Encode, DecodeToolResult)
	})
}

func readGolden(f *testing.F, name string) []byte {
	b, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		f.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// piFile is a pi session as the fuzzer sees it: the header and entries
// together, so that ReadPiFile's output can go through the fixed-point check.
type piFile struct {
	header  Entry
	entries []Entry
}

func FuzzReadPiFile(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(piDir, "*.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		// The header and a few short lines of each session: small seeds keep
		// the fuzzer fast (it minimises every new interesting input).
		lines := bytes.SplitAfter(b, []byte("\n"))
		seed := lines[0]
		for _, l := range lines[1:] {
			if len(l) < 250 && len(seed) < 500 {
				seed = append(seed[:len(seed):len(seed)], l...)
			}
		}
		f.Add(seed)
	}
	f.Add([]byte(`{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z"}` + "\n" +
		`{"type":"message","timestamp":"2026-01-01T00:00:01Z","message":{"role":"hookMessage","customType":"x","content":"hi","display":true}}` + "\n" +
		`{"type":"compaction","timestamp":"2026-01-01T00:00:02Z","summary":"s","firstKeptEntryIndex":1,"tokensBefore":5}`))
	encode := func(p piFile) ([]byte, error) {
		var b bytes.Buffer
		err := WritePiFile(&b, p.header, p.entries)
		return b.Bytes(), err
	}
	decode := func(b []byte) (piFile, error) {
		h, entries, err := ReadPiFile(bytes.NewReader(b))
		return piFile{h, entries}, err
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decode(data)
		if err != nil {
			return
		}
		fixedPoint(t, p, encode, decode)
	})
}
