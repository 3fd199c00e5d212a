package events

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"testing"
)

// The encoders append JSON themselves since they stopped writing every
// member through encoding/json; the old encoders are kept in
// oldencode_test.go. For any value, old and new must write the same bytes,
// or both fail.

// encoderPair is one encoder in its new and its old form, with the decoder
// that makes its values from JSON.
type encoderPair struct {
	name     string
	decode   func([]byte) (any, error) // a pointer to the decoded value
	new, old func(any) ([]byte, error)
}

func encPair[T any](name string, decode func([]byte) (T, error), newEnc, oldEnc func(T) ([]byte, error)) encoderPair {
	return encoderPair{
		name: name,
		decode: func(b []byte) (any, error) {
			v, err := decode(b)
			return &v, err
		},
		new: func(v any) ([]byte, error) { return newEnc(*v.(*T)) },
		old: func(v any) ([]byte, error) { return oldEnc(*v.(*T)) },
	}
}

func unmarshalWith[T any](dec func(*T, []byte) error) func([]byte) (T, error) {
	return func(b []byte) (T, error) {
		var v T
		err := dec(&v, b)
		return v, err
	}
}

func encoderPairs() []encoderPair {
	return []encoderPair{
		encPair("entry", DecodeEntry, Entry.MarshalJSON, oldEncodeEntry),
		encPair("message", unmarshalWith((*Message).UnmarshalJSON), Message.MarshalJSON,
			func(m Message) ([]byte, error) { return oldMessage(m).MarshalJSON() }),
		// a message in an event, where encoding/json compacted it
		encPair("event-message", unmarshalWith((*Message).UnmarshalJSON),
			func(m Message) ([]byte, error) {
				return Event{Type: EvTurnEnd, Message: &m, ToolResults: []Message{m}, Partial: &m}.Encode()
			},
			func(m Message) ([]byte, error) {
				return oldEncodeEvent(Event{Type: EvTurnEnd, Message: &m, ToolResults: []Message{m}, Partial: &m})
			}),
		encPair("block", unmarshalWith((*Block).UnmarshalJSON), Block.MarshalJSON,
			func(b Block) ([]byte, error) { return oldBlock(b).MarshalJSON() }),
		encPair("toolresult-block", unmarshalWith((*Block).UnmarshalJSON),
			func(b Block) ([]byte, error) { return ToolResult{Content: []Block{b, b}}.Encode() },
			func(b Block) ([]byte, error) { return oldEncodeToolResult(ToolResult{Content: []Block{b, b}}) }),
		encPair("content", unmarshalWith((*Content).UnmarshalJSON), Content.MarshalJSON,
			func(c Content) ([]byte, error) { return oldContent(c).MarshalJSON() }),
		encPair("usage", unmarshalWith((*Usage).UnmarshalJSON), Usage.MarshalJSON,
			func(u Usage) ([]byte, error) { return oldUsage(u).MarshalJSON() }),
		encPair("cost", unmarshalWith((*Cost).UnmarshalJSON), Cost.MarshalJSON,
			func(c Cost) ([]byte, error) { return oldCost(c).MarshalJSON() }),
		encPair("command", DecodeCommand, Command.MarshalJSON, oldEncodeCommand),
		encPair("event", DecodeEvent, Event.Encode, oldEncodeEvent),
		encPair("toolcall", DecodeToolCall, ToolCall.Encode, oldEncodeToolCall),
		encPair("toolresult", DecodeToolResult, ToolResult.Encode, oldEncodeToolResult),
	}
}

// encodeAgree checks that p's new and old encoders agree on v.
func encodeAgree(t *testing.T, p encoderPair, v any) {
	t.Helper()
	nb, nerr := p.new(v)
	ob, oerr := p.old(v)
	if (nerr == nil) != (oerr == nil) || !bytes.Equal(nb, ob) {
		t.Fatalf("%s: %#v encodes differently:\nnew: %s %v\nold: %s %v", p.name, v, nb, nerr, ob, oerr)
	}
}

// encodeAgreeAll decodes data with every decoder and checks the encoders
// on what decodes.
func encodeAgreeAll(t *testing.T, data []byte) {
	t.Helper()
	for _, p := range encoderPairs() {
		if v, err := p.decode(data); err == nil {
			encodeAgree(t, p, v)
		}
	}
}

// TestEncodeDifferentialSeeds encodes, new and old, every golden file, pi
// session line, hand-written input and fuzz corpus input that decodes.
func TestEncodeDifferentialSeeds(t *testing.T) {
	seeds, _ := differentialSeeds(t)
	inputs := append(seeds, fuzzCorpus(t, filepath.Join("testdata", "fuzz", "*", "*"))...)
	for _, s := range trickyInputs {
		inputs = append(inputs, []byte(s))
	}
	decoded := 0
	for _, s := range inputs {
		for _, p := range encoderPairs() {
			if v, err := p.decode(s); err == nil {
				decoded++
				encodeAgree(t, p, v)
			}
		}
	}
	if decoded < len(seeds) {
		t.Fatalf("only %d values decoded from %d seeds", decoded, len(seeds))
	}
}

// mutations calls check after setting each member of v, at every depth, to
// each of the tricky values of its type, one at a time; v is restored after.
func mutations(v reflect.Value, check func()) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		mutations(v.Elem(), check)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				mutateOne(f, check)
				mutations(f, check)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			mutateOne(v.Index(i), check)
			mutations(v.Index(i), check)
		}
	}
}

// TestEncodeDifferentialMutations changes one member at a time of every
// decoded golden value into values encoding/json writes with care, and
// encodes it, new and old.
func TestEncodeDifferentialMutations(t *testing.T) {
	seeds, _ := differentialSeeds(t)
	pairs := encoderPairs()
	checks := 0
	for i, s := range seeds {
		if i > 80 {
			break // the pi lines are more of the same
		}
		for _, p := range pairs {
			v, err := p.decode(s)
			if err != nil {
				continue
			}
			mutations(reflect.ValueOf(v), func() {
				checks++
				encodeAgree(t, p, v)
			})
		}
	}
	if checks < 1000 {
		t.Fatalf("only %d mutations checked", checks)
	}
	t.Logf("%d mutations checked", checks)
}

// FuzzEncodeDifferential encodes, new and old, whatever the fuzzer's input
// decodes to.
func FuzzEncodeDifferential(f *testing.F) {
	seeds, _ := differentialSeeds(f)
	for _, s := range seeds {
		if len(s) < 600 {
			f.Add(s)
		}
	}
	for _, s := range trickyInputs {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		encodeAgreeAll(t, data)
	})
}

// FuzzEncodeValues encodes, new and old, values built from the fuzzer's
// string, number, integer and raw JSON, in every place they can go.
func FuzzEncodeValues(f *testing.F) {
	f.Add("x", 1.5, int64(1), []byte(`{}`), "k")
	f.Add("<a>&\u2028\xff\x01", 1e21, int64(1<<53+1), []byte(" { \"a\" : 1 } "), "<\xff>")
	f.Add("", math.Copysign(0, -1), int64(-1), []byte(`bad`), "")
	f.Add("é", 1e-7, int64(math.MaxInt64), []byte(nil), "a")
	f.Fuzz(func(t *testing.T, s string, x float64, n int64, raw []byte, key string) {
		rawMsg := json.RawMessage(raw)
		extra := Extra{key: rawMsg, "z" + key: json.RawMessage(`1`)}
		blocks := []Block{
			{Type: BlockText, Text: s, TextSignature: s, Extra: extra},
			{Type: BlockThinking, Thinking: s, ThinkingSignature: s, Redacted: n%2 == 0},
			{Type: BlockImage, Data: s, MimeType: s, Blob: s},
			{Type: BlockToolCall, ID: s, Name: s, Arguments: rawMsg, ThoughtSignature: s},
		}
		usage := &Usage{Input: n, Output: -n, CacheRead: n / 3, TotalTokens: n, Cost: Cost{Input: x, Output: -x, Total: x * 3}}
		msgs := []Message{
			{Role: RoleUser, Content: Content{Blocks: blocks[:1], String: n%3 == 0}, Timestamp: n, CommandID: s, Extra: extra},
			{Role: RoleAssistant, Content: Content{Blocks: blocks}, API: s, Provider: s, Model: s, Usage: usage,
				StopReason: StopReason(s), ErrorMessage: s, ResponseID: s},
			{Role: RoleToolResult, ToolCallID: s, ToolName: s, Content: Content{Blocks: blocks[2:]}, Details: rawMsg, IsError: true},
			{Role: RoleCustom, CustomType: s, Content: Content{String: true}, Display: true, Details: rawMsg},
			{Role: RoleBranchSummary, Summary: s, FromID: s},
			{Role: RoleCompactionSummary, Summary: s, TokensBefore: n},
			{Role: RoleBashExecution, Command: s, Output: s, ExitCode: &n, Cancelled: true, FullOutputPath: s, ExcludeFromContext: true},
		}
		pairs := map[string]encoderPair{}
		for _, p := range encoderPairs() {
			pairs[p.name] = p
		}
		for i := range msgs {
			encodeAgree(t, pairs["message"], &msgs[i])
			encodeAgree(t, pairs["event-message"], &msgs[i])
		}
		for i := range blocks {
			encodeAgree(t, pairs["block"], &blocks[i])
			encodeAgree(t, pairs["toolresult-block"], &blocks[i])
		}
		encodeAgree(t, pairs["usage"], usage)
		for _, typ := range []string{EntrySession, EntryMessage, EntryModelChange, EntryThinkingLevelChange, EntryActiveToolsChange,
			EntryCompaction, EntryBranchSummary, EntryLabel, EntryCustom, EntryCustomMessage, EntrySessionInfo, EntryLeaf,
			EntryTurnInterrupted, EntryCommandRejected} {
			e := Entry{V: int(n), Type: typ, ID: s, ParentID: &s, Timestamp: s, CommandID: s, ParentDigest: s, Version: int(n),
				Cwd: s, ParentSession: s, Model: s, ThinkingLevel: s, SystemPrompt: s, Tools: []string{s, key}, Labels: map[string]string{s: key, key: s},
				Tenant: s, Message: &msgs[1], Provider: s, ModelID: s, Summary: s, FirstKeptEntryID: s, TokensBefore: n, FromID: s,
				Details: rawMsg, FromHook: true, TargetID: &key, Label: s, CustomType: s, Data: rawMsg, Content: msgs[0].Content,
				Display: true, Name: s, Reason: s, Code: s, Extra: extra, Retry: &RetryMark{Attempt: int(n), DelayMs: n, Code: s}}
			encodeAgree(t, pairs["entry"], &e)
		}
		ev := Event{Type: s, SessionID: s, Seq: uint64(n), Time: s, Message: &msgs[1], Delta: &Delta{Kind: s, ContentIndex: int(n), Delta: s, ToolCallID: s, ToolName: s},
			ToolResults: msgs[2:3], Messages: msgs, ToolCallID: s, ToolName: s, Args: rawMsg, Partial: &msgs[2], Result: &msgs[3], IsError: true,
			Queue: &Queue{Steering: []string{s}}, Retry: &Retry{Attempt: int(n), MaxAttempts: 3, DelayMs: n, ErrorMessage: s, Success: true},
			Compaction: &Compaction{Reason: s, TokensBefore: n, Summary: s, EntryID: s, Aborted: true, Error: s}, Hook: s, CommandID: s, Error: s}
		encodeAgree(t, pairs["event"], &ev)
		tc := ToolCall{SessionID: s, ToolCallID: s, Name: s, Arguments: rawMsg, Workspace: s, Idempotent: true, TimeoutMs: n, Owner: s, Dispatched: s}
		encodeAgree(t, pairs["toolcall"], &tc)
		tr := ToolResult{SessionID: s, ToolCallID: s, ToolName: s, Content: blocks, Details: rawMsg, IsError: true, Terminate: true, Interrupted: true, DurationMs: n, Worker: s}
		encodeAgree(t, pairs["toolresult"], &tr)
		cmd := Command{V: int(n), ID: s, Type: CmdNavigate, SessionID: s, Model: s, SystemPrompt: s, Tools: []string{}, Workspace: s, Text: s,
			Images: []Image{{Data: s, MimeType: s}}, WhenBusy: BusyPolicy(s), Summarize: true, Instructions: s, Level: s, Label: s, Extra: extra}
		encodeAgree(t, pairs["command"], &cmd)
		cmd.EntryID, cmd.Tools = &s, []string{s}
		encodeAgree(t, pairs["command"], &cmd)
	})
}
