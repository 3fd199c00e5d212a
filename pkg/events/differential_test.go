package events

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The decoders read JSON with a span scanner since they stopped decoding
// every object into a map; the old decoders are kept in olddecode_test.go.
// For any input, old and new must agree: both accept or both refuse, with
// the same error (same field, same words), the same decoded value (even on
// error: a caller may look at what was decoded so far), and the same bytes
// when the value is encoded again.

// decoderPair is one decoder in its new and its old form; each returns the
// decoded value and the error.
type decoderPair struct {
	name     string
	new, old func([]byte) (any, error)
	encode   func(any) ([]byte, error)
}

func unmarshalPair[T any](name string, newDec func(*T, []byte) error, oldDec func(*T, []byte, string) error, encode func(T) ([]byte, error)) decoderPair {
	return decoderPair{
		name: name,
		new:  func(b []byte) (any, error) { var v T; err := newDec(&v, b); return v, err },
		old:  func(b []byte) (any, error) { var v T; err := oldDec(&v, b, ""); return v, err },
		encode: func(v any) ([]byte, error) {
			return encode(v.(T))
		},
	}
}

func decodePair[T any](name string, newDec, oldDec func([]byte) (T, error), encode func(T) ([]byte, error)) decoderPair {
	return decoderPair{
		name:   name,
		new:    func(b []byte) (any, error) { return newDec(b) },
		old:    func(b []byte) (any, error) { return oldDec(b) },
		encode: func(v any) ([]byte, error) { return encode(v.(T)) },
	}
}

func decoderPairs() []decoderPair {
	return []decoderPair{
		decodePair("entry", DecodeEntry, oldDecodeEntry, Entry.MarshalJSON),
		unmarshalPair("message", (*Message).UnmarshalJSON, oldDecodeMessage, Message.MarshalJSON),
		unmarshalPair("block", (*Block).UnmarshalJSON, oldDecodeBlock, Block.MarshalJSON),
		unmarshalPair("content", (*Content).UnmarshalJSON, oldDecodeContent, Content.MarshalJSON),
		unmarshalPair("usage", (*Usage).UnmarshalJSON, oldDecodeUsage, Usage.MarshalJSON),
		unmarshalPair("cost", (*Cost).UnmarshalJSON, oldDecodeCost, Cost.MarshalJSON),
		decodePair("command", DecodeCommand, oldDecodeCommand, Command.MarshalJSON),
		decodePair("event", DecodeEvent, oldDecodeEvent, Event.Encode),
		decodePair("toolcall", DecodeToolCall, oldDecodeToolCall, ToolCall.Encode),
		decodePair("toolresult", DecodeToolResult, oldDecodeToolResult, ToolResult.Encode),
		decodePair("pi",
			func(b []byte) (piFile, error) { h, e, err := ReadPiFile(bytes.NewReader(b)); return piFile{h, e}, err },
			func(b []byte) (piFile, error) {
				h, e, err := oldReadPiFile(bytes.NewReader(b))
				return piFile{h, e}, err
			},
			func(p piFile) ([]byte, error) {
				var b bytes.Buffer
				err := WritePiFile(&b, p.header, p.entries)
				return b.Bytes(), err
			}),
	}
}

// agree checks that d's new and old forms agree on data.
func agree(t *testing.T, d decoderPair, data []byte) {
	t.Helper()
	nv, nerr := d.new(data)
	ov, oerr := d.old(data)
	if !reflect.DeepEqual(nerr, oerr) {
		t.Fatalf("%s: %q\nnew error: %v\nold error: %v", d.name, data, nerr, oerr)
	}
	if !reflect.DeepEqual(nv, ov) {
		t.Fatalf("%s: %q\nnew value: %#v\nold value: %#v", d.name, data, nv, ov)
	}
	if nerr != nil {
		return
	}
	nb, nerr := d.encode(nv)
	ob, oerr := d.encode(ov)
	if !bytes.Equal(nb, ob) || !reflect.DeepEqual(nerr, oerr) {
		t.Fatalf("%s: %q encodes differently:\nnew: %s %v\nold: %s %v", d.name, data, nb, nerr, ob, oerr)
	}
}

// agreeAll runs every decoder pair on data.
func agreeAll(t *testing.T, data []byte) {
	t.Helper()
	for _, d := range decoderPairs() {
		agree(t, d, data)
	}
}

// differentialSeeds returns the golden files, their kind (a decoder name),
// and the lines of the pi sessions as entries.
func differentialSeeds(tb testing.TB) (seeds [][]byte, kinds []string) {
	tb.Helper()
	dirs := map[string]string{"entry": "entry", "message": "message", "block": "block", "command": "command", "event": "event"}
	for dir, kind := range dirs {
		paths, _ := filepath.Glob(filepath.Join(goldenDir, dir, "*.json"))
		for _, p := range paths {
			seeds = append(seeds, readFile(tb, p))
			kinds = append(kinds, kind)
		}
	}
	for name, kind := range map[string]string{"toolcall.json": "toolcall", "toolresult.json": "toolresult"} {
		seeds = append(seeds, readFile(tb, filepath.Join(goldenDir, name)))
		kinds = append(kinds, kind)
	}
	paths, _ := filepath.Glob(filepath.Join(piDir, "*.jsonl"))
	for _, p := range paths {
		for line := range bytes.Lines(readFile(tb, p)) {
			if line = bytes.TrimSpace(line); len(line) > 0 {
				seeds = append(seeds, line)
				kinds = append(kinds, "entry")
			}
		}
	}
	return seeds, kinds
}

// TestDifferentialSeeds runs every decoder on the golden files, the pi
// sessions, and the hand-written inputs below.
func TestDifferentialSeeds(t *testing.T) {
	seeds, _ := differentialSeeds(t)
	for _, s := range seeds {
		agreeAll(t, s)
	}
	paths, _ := filepath.Glob(filepath.Join(piDir, "*.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		agreeAll(t, b)
	}
	for _, s := range trickyInputs {
		agreeAll(t, []byte(s))
	}
	for _, s := range fuzzCorpus(t, filepath.Join("testdata", "fuzz", "*", "*")) {
		agreeAll(t, s)
	}
}

// fuzzCorpus returns the []byte inputs of the fuzz corpus files that match
// pattern.
func fuzzCorpus(t *testing.T, pattern string) [][]byte {
	paths, _ := filepath.Glob(pattern)
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			line = strings.TrimSpace(line)
			if lit, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				out = append(out, []byte(s))
			}
		}
	}
	return out
}

// trickyInputs are what a span scanner could get wrong.
var trickyInputs = []string{
	``, ` `, `null`, `{}`, `[]`, `"x"`, `1`, `{`, `}`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, "\v{}", "{}\v", `{}{}`, `{} x`,
	" \t\r\n{ \"type\" : \"message\" , \"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\": { \"role\":\"user\" ,\"content\" : [ { \"type\" : \"text\" , \"text\" : \"hi\" } ] , \"x\" : [ 1 , { \"y\" : null } ] } } \n",
	// duplicate keys: the last wins, in known and unknown members alike
	`{"type":"session","type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"x"},"z":1,"z":2}`,
	`{"type":"message","id":"a","id":"b","parentId":"q","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"assistant","role":"user","content":"x","content":[]}}`,
	// escaped keys and values
	`{"\u0074ype":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"x\u00e9\ud83d\ude00\ud800\udc00\ud800x\udc00\"\\\/\b\f\n\r\t"},"k\u00e9y":"v","\ud800":1}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"` + "\xff\xfe\xed\xa0\x80é\u2028" + `"},"` + "\xff" + `":"` + "\xc3" + `"}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"\\\\\"\\"}}`,
	`{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":[{"type":"toolCall","id":"t","name":"n","arguments":{ "a" : [ 1 , "b\"}" ] }}]}}`,
	// numbers
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","summary":"s","firstKeptEntryId":"b","tokensBefore":1.7e12}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","summary":"s","firstKeptEntryId":"b","tokensBefore":-0}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","summary":"s","firstKeptEntryId":"b","tokensBefore":9223372036854775807}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","summary":"s","firstKeptEntryId":"b","tokensBefore":9223372036854775808}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","summary":"s","firstKeptEntryId":"b","tokensBefore":1e19}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","summary":"s","firstKeptEntryId":"b","tokensBefore":123456789012345678}`,
	`{"type":"compaction","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z","summary":"s","firstKeptEntryId":"b","tokensBefore":1234567890123456789}`,
	`{"input":1,"output":2E2,"cacheRead":-3,"cost":{"input":1e400,"total":-0.0}}`,
	`{"input":1,"cost":{"input":1e-400,"output":0.1,"total":"1"},"x":[]}`,
	// session headers
	`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","tools":["a",null,"\u0062"],"labels":{"a":null,"b":"c","b":"d"}}`,
	`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","tools":[],"labels":{}}`,
	`{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00Z","tools":"a","labels":[]}`,
	// commands, events and tool envelopes
	`{"v":1,"id":"c1","type":"navigate","entryId":"x","entryId":null}`,
	`{"v":1,"id":"c1","type":"prompt","text":"a","text":5,"Text":"b","images":[{"DATA":"AA==","mimeType":"image/png"}]}`,
	`{"v":1,"id":"c1","type":"prompt","text":"hi","v":1.5,"id":7}`,
	`{"v":1,"type":"agent_end","messages":[{"role":"user","content":"a"},null]}`,
	`{"v":1,"type":"agent_end","messages":[1]}`,
	`{"v":1,"type":"turn_end","toolResults":[],"message":{"role":"assistant","content":"x"}}`,
	`{"v":1,"type":"message_update","delta":{"KIND":"text","contentIndex":1e2,"delta":"x"},"seq":1.0}`,
	`{"v":1,"sessionId":"s","toolCallId":"t","name":"n","arguments":{ "a" : 1 },"idempotent":true,"timeoutMs":5,"timeoutMs":-1}`,
	// raw values of the envelopes, with space to drop and characters encoding/json escapes
	`{"v":1,"sessionId":"s","toolCallId":"t","name":"n","arguments":{ "a" : "<b>& ` + "  " + `" , "c": [ 1 , 2 ] },"idempotent":true}`,
	`{"v":1,"type":"tool_execution_start","toolCallId":"t","toolName":"n","args":{ "q" : "a<b" }}`,
	`{"v":1,"kind":"tool","sessionId":"s","toolCallId":"t","toolName":"n","content":[],"details":{ "x" : "<&>" },"isError":false,"durationMs":1}`,
	`{"v":1,"id":"c1","type":"prompt","text":"<a href=\"x\">&amp;</a>` + " " + `","sessionId":"s1","whenBusy":"steer"}`,
	`{"v":1,"kind":"tool","sessionId":"s","toolCallId":"t","toolName":"n","content":[null],"isError":false,"durationMs":1}`,
	`{"v":1,"kind":"tool","sessionId":"s","toolCallId":"t","toolName":"n","content":[],"details":{ "a":[ ] },"isError":false,"durationMs":1.5}`,
}

// TestDifferentialMutations changes one value at a time, at every depth of
// every golden file, into each of a set of JSON values, and runs the
// decoder of the file's kind on the result; and it cuts each golden entry
// short at every byte.
func TestDifferentialMutations(t *testing.T) {
	seeds, kinds := differentialSeeds(t)
	pairs := map[string]decoderPair{}
	for _, d := range decoderPairs() {
		pairs[d.name] = d
	}
	replacements := []string{`null`, `0`, `-0`, `-1`, `1.5`, `1e400`, `1234567890123456789`, `12345678901234567890`, `""`, `"x"`, `"\u00e9\ud800"`, `true`, `[]`, `{}`, `[null]`, `["a",1]`,
		`{"type":"text","text":"t"}`, "\"<a&b>\u2028\"", "{\"k\":[\"<&>\u2029\",2]}"}
	for i, seed := range seeds {
		if i > 80 {
			break // the pi lines are more of the same
		}
		d := pairs[kinds[i]]
		var doc any
		dec := json.NewDecoder(bytes.NewReader(seed))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		for _, path := range jsonPaths(doc, nil) {
			for _, r := range replacements {
				b := replaceAt(t, doc, path, json.RawMessage(r))
				agree(t, d, b)
				if kinds[i] != "entry" { // and with space between the tokens
					var ind bytes.Buffer
					if err := json.Indent(&ind, b, " ", "\t"); err != nil {
						t.Fatal(err)
					}
					agree(t, d, ind.Bytes())
				}
			}
		}
		if kinds[i] == "entry" && len(seed) < 400 {
			for n := range len(seed) {
				agree(t, d, seed[:n])
			}
		}
	}
}

// jsonPaths returns the path (keys and indexes) of every value in doc.
func jsonPaths(doc any, prefix []string) [][]string {
	var out [][]string
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			p := append(prefix[:len(prefix):len(prefix)], k)
			out = append(out, p)
			out = append(out, jsonPaths(x, p)...)
		}
	case []any:
		for i, x := range v {
			p := append(prefix[:len(prefix):len(prefix)], "["+strconv.Itoa(i))
			out = append(out, p)
			out = append(out, jsonPaths(x, p)...)
		}
	}
	return out
}

// replaceAt returns doc encoded with the value at path replaced by r.
func replaceAt(t *testing.T, doc any, path []string, r json.RawMessage) []byte {
	var swap func(v any, path []string) any
	swap = func(v any, path []string) any {
		if len(path) == 0 {
			return r
		}
		switch v := v.(type) {
		case map[string]any:
			c := make(map[string]any, len(v))
			for k, x := range v {
				c[k] = x
			}
			c[path[0]] = swap(v[path[0]], path[1:])
			return c
		case []any:
			i, _ := strconv.Atoi(strings.TrimPrefix(path[0], "["))
			c := append([]any(nil), v...)
			c[i] = swap(v[i], path[1:])
			return c
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep the characters encoding/json escapes
	if err := enc.Encode(swap(doc, path)); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b.Bytes())
}

// FuzzDifferential runs every decoder, new and old, on the fuzzer's inputs.
func FuzzDifferential(f *testing.F) {
	seeds, _ := differentialSeeds(f)
	for _, s := range seeds {
		if len(s) < 600 { // small seeds keep the fuzzer fast
			f.Add(s)
		}
	}
	for _, s := range trickyInputs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeAll(t, data)
	})
}
