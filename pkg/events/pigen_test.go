package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file writes the realistic pi session files of testdata/pi (go test
// -run TestGeneratePiSessions -update). They are written the way pi writes
// them, as plain JSON built here, never through Cairn's types, so that
// reading them tests Cairn against pi's format rather than against itself.

const piDir = "testdata/pi"

// piSessionSpecs are the generated files: name, format version, entries.
var piSessionSpecs = []struct {
	name    string
	version int
	entries int
	seed    uint64
	busy    float64 // how often side entries, setting changes and branches happen (1 = normal)
	// piBranch: branch summaries as pi writes them, and new roots (see
	// piGen.branch). Off for the first files, whose ids other tests name.
	piBranch bool
}{
	{"v1-linear.jsonl", 1, 320, 1, 2, false},
	{"v2-hooks.jsonl", 2, 300, 2, 1.5, false},
	{"v3-coding.jsonl", 3, 520, 3, 1.5, false},
	{"v3-branchy.jsonl", 3, 400, 4, 3.5, false},
	{"v3-forked.jsonl", 3, 260, 5, 2, false},
	{"v3-navigation.jsonl", 3, 450, 6, 3, true},
}

// writePiSessions writes the generated sessions to testdata/pi, once per
// test run, when -update is given; every test that reads them calls it first.
func writePiSessions(t *testing.T) {
	t.Helper()
	if !*update {
		return
	}
	writePiOnce.Do(func() {
		if err := os.MkdirAll(piDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range piSessionSpecs {
			data := generatePiSession(s.version, s.entries, s.seed, s.busy, s.piBranch, s.name == "v3-forked.jsonl")
			if err := os.WriteFile(filepath.Join(piDir, s.name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}

var writePiOnce sync.Once

// The committed sessions are what the generator writes.
func TestGeneratePiSessions(t *testing.T) {
	writePiSessions(t)
	for _, s := range piSessionSpecs {
		data := generatePiSession(s.version, s.entries, s.seed, s.busy, s.piBranch, s.name == "v3-forked.jsonl")
		path := filepath.Join(piDir, s.name)
		have, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(have, data) {
			t.Errorf("%s differs from what the generator writes; run go test -update", path)
		}
	}
}

// obj is a JSON object that keeps its keys in insertion order, as
// JavaScript's JSON.stringify does.
type obj struct {
	keys []string
	vals map[string]any
}

func o(kv ...any) *obj {
	x := &obj{vals: map[string]any{}}
	for i := 0; i < len(kv); i += 2 {
		x.set(kv[i].(string), kv[i+1])
	}
	return x
}

func (x *obj) set(k string, v any) *obj {
	if _, ok := x.vals[k]; !ok {
		x.keys = append(x.keys, k)
	}
	x.vals[k] = v
	return x
}

func (x *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range x.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalNoEscape(x.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type piGen struct {
	rng     *rand.Rand
	version int
	out     bytes.Buffer
	now     time.Time
	n       int      // entries written, header excluded
	ids     []string // every entry id, in order (v2, v3)
	path    []string // ids from the root to the current leaf (v2, v3)
	msgIDs  []string // ids of message entries, for labels
	calls   int
	model   [2]string
	busy    float64
	// piBranch: see piSessionSpecs
	piBranch bool
}

var piModels = [][2]string{
	{"anthropic", "claude-sonnet-4-5"}, {"anthropic", "claude-opus-4-1"},
	{"openai", "gpt-5"}, {"google", "gemini-2.5-pro"},
}

var piAPIs = map[string]string{"anthropic": "anthropic-messages", "openai": "openai-responses", "google": "google-generative-ai"}

const tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func generatePiSession(version, entries int, seed uint64, busy float64, piBranch, forked bool) []byte {
	g := &piGen{rng: rand.New(rand.NewPCG(seed, seed*7919)), version: version, busy: busy, piBranch: piBranch,
		now: time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(seed) * time.Hour), model: piModels[0]}
	header := o("type", "session")
	if version > 1 {
		header.set("version", version)
	}
	header.set("id", fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", g.rng.Uint32(), g.rng.IntN(1<<16), g.rng.IntN(1<<12), g.rng.IntN(1<<12), g.rng.Uint64()>>16))
	header.set("timestamp", g.stamp())
	header.set("cwd", "/home/dev/projects/cairn")
	if forked {
		header.set("parentSession", "/home/dev/.pi/agent/sessions/--home-dev-projects-cairn--/2026-01-30T10-00-00-000Z_0b7c2d1e.jsonl")
	}
	g.line(header)
	for g.n < entries {
		g.turn()
	}
	return g.out.Bytes()
}

func (g *piGen) line(x *obj) {
	b, err := x.MarshalJSON()
	if err != nil {
		panic(err)
	}
	g.out.Write(b)
	g.out.WriteByte('\n')
}

func (g *piGen) tick() {
	g.now = g.now.Add(time.Duration(200+g.rng.IntN(20000)) * time.Millisecond)
}

func (g *piGen) stamp() string { return g.now.UTC().Format("2006-01-02T15:04:05.000Z") }
func (g *piGen) ms() int64     { return g.now.UnixMilli() }
func (g *piGen) chance(p float64) bool {
	return g.rng.Float64() < p
}

// often is chance scaled by the session's busyness.
func (g *piGen) often(p float64) bool { return g.chance(p * g.busy) }

// entry starts an entry of type typ, with id and parent for v2 and later.
func (g *piGen) entry(typ string) *obj {
	g.tick()
	x := o("type", typ)
	if g.version >= 2 {
		id := fmt.Sprintf("%08x", g.rng.Uint32())
		x.set("id", id)
		if len(g.path) == 0 {
			x.set("parentId", nil)
		} else {
			x.set("parentId", g.path[len(g.path)-1])
		}
		g.ids = append(g.ids, id)
		g.path = append(g.path, id)
	}
	x.set("timestamp", g.stamp())
	return x
}

func (g *piGen) emit(x *obj) {
	g.line(x)
	g.n++
}

func (g *piGen) message(m *obj) {
	e := g.entry("message")
	e.set("message", m)
	if g.version >= 2 {
		g.msgIDs = append(g.msgIDs, g.path[len(g.path)-1])
	}
	if g.chance(0.02) {
		e.set("piDebug", o("build", "0.42.1", "pid", 4242)) // a field Cairn does not model
	}
	g.emit(e)
}

var piPrompts = []string{
	"The decoder accepts entries without a timestamp; make it strict.",
	"Why does `go test ./pkg/events` fail on CI but not locally?",
	"Add a fuzz test for the command decoder.",
	"Refactor the writer so that optional fields are omitted <when empty>.",
	"Summarise what changed in the last three commits & why.",
	"Look at the screenshot: the tree view renders branches twice.",
	"Run the benchmarks and tell me whether the change is faster.",
	"Rename Session to Log everywhere, except in the docs.",
}

var piTools = []struct {
	name string
	args func(g *piGen) *obj
}{
	{"read", func(g *piGen) *obj { return o("path", g.file()) }},
	{"bash", func(g *piGen) *obj { return o("command", "go test -race ./pkg/"+g.pkg()+"/...", "timeout", 120) }},
	{"edit", func(g *piGen) *obj {
		return o("path", g.file(), "oldText", "if err != nil {\n\treturn err\n}", "newText", "if err != nil {\n\treturn fmt.Errorf(\"decode: %w\", err)\n}")
	}},
	{"write", func(g *piGen) *obj { return o("path", g.file(), "content", "package events\n\n// Doc.\n") }},
	{"grep", func(g *piGen) *obj { return o("pattern", "func Decode", "path", "pkg/", "ignoreCase", false) }},
	{"ls", func(g *piGen) *obj { return o("path", "pkg/"+g.pkg()) }},
}

func (g *piGen) pkg() string {
	return []string{"events", "session", "llm", "tool"}[g.rng.IntN(4)]
}

func (g *piGen) file() string {
	return "pkg/" + g.pkg() + "/" + []string{"entry.go", "log.go", "decode.go", "doc.go", "util_test.go"}[g.rng.IntN(5)]
}

func (g *piGen) usage() *obj {
	in, out := 800+g.rng.IntN(30000), 20+g.rng.IntN(2000)
	cr, cw := g.rng.IntN(60000), g.rng.IntN(4000)
	ci, co := float64(in)*3e-6, float64(out)*15e-6
	cc, cwc := float64(cr)*3e-7, float64(cw)*3.75e-6
	return o("input", in, "output", out, "cacheRead", cr, "cacheWrite", cw, "totalTokens", in+out+cr+cw,
		"cost", o("input", ci, "output", co, "cacheRead", cc, "cacheWrite", cwc, "total", ci+co+cc+cwc))
}

func (g *piGen) sig() string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	for range 40 + g.rng.IntN(80) {
		b.WriteByte(chars[g.rng.IntN(len(chars))])
	}
	return b.String()
}

func (g *piGen) assistant(content []any, stop string) *obj {
	g.tick()
	m := o("role", "assistant", "content", content, "api", piAPIs[g.model[0]], "provider", g.model[0], "model", g.model[1])
	if g.model[0] == "openai" {
		m.set("responseId", fmt.Sprintf("resp_%016x", g.rng.Uint64()))
	}
	m.set("usage", g.usage())
	m.set("stopReason", stop)
	switch stop {
	case "error":
		m.set("errorMessage", "529 overloaded_error: Overloaded")
	case "aborted":
		m.set("errorMessage", "Request was aborted")
	}
	m.set("timestamp", g.ms())
	return m
}

func (g *piGen) thinking() *obj {
	b := o("type", "thinking", "thinking", "I should check how the decoder treats a missing field before changing it.")
	if g.model[0] == "anthropic" {
		b.set("thinkingSignature", g.sig())
	} else if g.chance(0.3) {
		b.set("thinkingSignature", `{"id":"rs_`+fmt.Sprintf("%x", g.rng.Uint64())+`","type":"reasoning"}`)
	}
	if g.chance(0.03) {
		b.set("redacted", true)
	}
	return b
}

// turn writes one user prompt and the agent's work on it, and now and then
// a setting change, a side entry, a compaction or a branch.
func (g *piGen) turn() {
	if g.often(0.08) {
		g.model = piModels[g.rng.IntN(len(piModels))]
		e := g.entry("model_change")
		e.set("provider", g.model[0]).set("modelId", g.model[1])
		g.emit(e)
	}
	if g.often(0.08) {
		e := g.entry("thinking_level_change")
		e.set("thinkingLevel", ThinkingLevels[g.rng.IntN(len(ThinkingLevels))])
		g.emit(e)
	}
	if g.often(0.05) {
		g.bash()
	}
	if g.version >= 2 {
		g.sideEntries()
	}
	g.user()
	rounds := g.rng.IntN(4)
	for r := 0; r < rounds; r++ {
		g.toolRound()
	}
	var final []any
	if g.chance(0.5) {
		final = append(final, g.thinking())
	}
	text := o("type", "text", "text", "Done: the decoder now refuses a missing timestamp, and the tests cover it.")
	if g.model[0] == "openai" && g.chance(0.5) {
		text.set("textSignature", "msg_"+fmt.Sprintf("%x", g.rng.Uint64()))
	}
	final = append(final, text)
	stop := "stop"
	switch p := g.rng.Float64(); {
	case p < 0.04:
		stop, final = "error", []any{}
	case p < 0.07:
		stop = "aborted"
	case p < 0.09:
		stop = "length"
	}
	m := g.assistant(final, stop)
	if g.chance(0.03) {
		m.set("piExtension", o("latencyMs", 1234)) // a field Cairn does not model
	}
	g.message(m)
	if g.often(0.04) {
		g.compaction()
	}
	if g.version >= 2 && g.often(0.08) {
		g.branch()
	}
}

func (g *piGen) user() {
	g.tick()
	prompt := piPrompts[g.rng.IntN(len(piPrompts))]
	var content any = prompt
	if g.chance(0.5) {
		blocks := []any{o("type", "text", "text", prompt)}
		if g.chance(0.25) {
			blocks = append(blocks, o("type", "image", "data", tinyPNG, "mimeType", "image/png"))
		}
		content = blocks
	}
	g.message(o("role", "user", "content", content, "timestamp", g.ms()))
}

func (g *piGen) toolRound() {
	var content []any
	if g.chance(0.7) {
		content = append(content, g.thinking())
	}
	if g.chance(0.4) {
		content = append(content, o("type", "text", "text", "Let me look at the code first."))
	}
	type call struct{ id, name string }
	var calls []call
	for range 1 + g.rng.IntN(3) {
		tool := piTools[g.rng.IntN(len(piTools))]
		g.calls++
		id := fmt.Sprintf("toolu_%02d%012x", g.calls%100, g.rng.Uint64()>>16)
		if g.model[0] == "openai" {
			id = fmt.Sprintf("call_%x|fc_%x", g.rng.Uint64(), g.rng.Uint64())
		}
		b := o("type", "toolCall", "id", id, "name", tool.name, "arguments", tool.args(g))
		if g.model[0] == "google" {
			b.set("thoughtSignature", g.sig())
		}
		content = append(content, b)
		calls = append(calls, call{id, tool.name})
	}
	g.message(g.assistant(content, "toolUse"))
	for _, c := range calls {
		g.tick()
		isError := g.chance(0.1)
		var out []any
		var details any
		switch {
		case isError:
			out = []any{o("type", "text", "text", "Error: ENOENT: no such file or directory")}
		case c.name == "read" && g.chance(0.15):
			out = []any{o("type", "text", "text", "Read image file [image/png]"), o("type", "image", "data", tinyPNG, "mimeType", "image/png")}
		case c.name == "bash":
			out = []any{o("type", "text", "text", "ok  \tgithub.com/cairn-agents/cairn/pkg/events\t0.412s\n")}
			if g.chance(0.3) {
				details = o("truncation", o("truncated", true, "totalLines", 4200, "outputLines", 2000), "fullOutputPath", "/tmp/pi-bash-"+fmt.Sprint(g.calls)+".log")
			}
		case c.name == "edit":
			out = []any{o("type", "text", "text", "Successfully replaced text in "+g.file()+".")}
			details = o("diff", "-\treturn err\n+\treturn fmt.Errorf(\"decode: %w\", err)\n", "firstChangedLine", 42)
		default:
			out = []any{o("type", "text", "text", "package events\n\nimport \"encoding/json\"\n")}
		}
		m := o("role", "toolResult", "toolCallId", c.id, "toolName", c.name, "content", out)
		if details != nil {
			m.set("details", details)
		}
		m.set("isError", isError).set("timestamp", g.ms())
		g.message(m)
	}
}

func (g *piGen) bash() {
	g.tick()
	m := o("role", "bashExecution", "command", "git status --short", "output", " M pkg/events/entry.go\n?? notes.md\n")
	switch p := g.rng.Float64(); {
	case p < 0.15: // cancelled: exitCode is undefined, so JSON.stringify leaves it out
		m.set("cancelled", true).set("truncated", false)
	case p < 0.3:
		m.set("exitCode", 1).set("cancelled", false).set("truncated", true).set("fullOutputPath", "/tmp/pi-bash-out.log")
	default:
		m.set("exitCode", 0).set("cancelled", false).set("truncated", false)
	}
	m.set("timestamp", g.ms())
	if g.chance(0.3) {
		m.set("excludeFromContext", true)
	}
	g.message(m)
}

// sideEntries writes the entries of v2 and v3 that are not part of a turn:
// hook messages (v2), custom entries, custom messages, labels and names.
func (g *piGen) sideEntries() {
	if g.version == 2 && g.often(0.15) {
		g.tick()
		m := o("role", "hookMessage", "customType", "git-status", "content", "Branch main is 2 commits ahead.", "display", g.chance(0.5))
		if g.chance(0.5) {
			m.set("details", o("ahead", 2, "behind", 0))
		}
		m.set("timestamp", g.ms())
		g.message(m)
	}
	if g.often(0.06) {
		e := g.entry("custom")
		e.set("customType", "todo-state")
		if g.chance(0.8) {
			e.set("data", o("todos", []any{o("text", "write the fuzz test", "done", g.chance(0.5))}, "version", 2))
		}
		g.emit(e)
	}
	if g.version < 3 {
		return
	}
	if g.often(0.06) {
		e := g.entry("custom_message")
		e.set("customType", "reminder")
		if g.chance(0.5) {
			e.set("content", "Remember: run gofmt before committing.")
		} else {
			e.set("content", []any{o("type", "text", "text", "The CI run failed:"), o("type", "image", "data", tinyPNG, "mimeType", "image/png")})
		}
		if g.chance(0.5) {
			e.set("details", o("source", "ci-watch"))
		}
		e.set("display", g.chance(0.6))
		g.emit(e)
	}
	if g.often(0.06) && len(g.msgIDs) > 0 {
		e := g.entry("label")
		e.set("targetId", g.msgIDs[g.rng.IntN(len(g.msgIDs))])
		if g.chance(0.8) {
			e.set("label", []string{"checkpoint", "before-refactor", "good", "bug repro"}[g.rng.IntN(4)])
		}
		g.emit(e)
	}
	if g.often(0.02) {
		e := g.entry("session_info")
		e.set("name", []string{"strict decoder", "fuzzing", "tree view bug"}[g.rng.IntN(3)])
		g.emit(e)
	}
}

func (g *piGen) compaction() {
	var firstKept any
	if g.version >= 2 {
		back := min(len(g.path), 1+g.rng.IntN(12))
		firstKept = g.path[len(g.path)-back]
	}
	e := g.entry("compaction")
	e.set("summary", "## Goal\nMake the decoder strict.\n\n## Progress\n- [x] timestamps\n- [ ] fuzz tests\n\n## Next\nRun the fuzzers.")
	if g.version >= 2 {
		e.set("firstKeptEntryId", firstKept)
	} else {
		// v1 names the first kept entry by its position in the file (header 0).
		e.set("firstKeptEntryIndex", max(1, g.n-g.rng.IntN(12)))
	}
	e.set("tokensBefore", 90000+g.rng.IntN(100000))
	if g.version >= 2 && g.chance(0.7) {
		e.set("details", o("readFiles", []string{"pkg/events/entry.go", "pkg/events/doc.go"}, "modifiedFiles", []string{"pkg/events/entry.go"}))
	}
	if g.version >= 3 && g.chance(0.2) {
		e.set("fromHook", true)
	}
	g.emit(e)
}

// branch moves the leaf back to an earlier entry of the current path.
//
// With piBranch, it does what pi's tree navigation does: sometimes it goes
// before the first entry (a new root), and most of the time it appends a
// branch summary as a child of the branch point, fromId naming that point
// ("root" for a new root). Without it (the first sessions generated, kept
// as they are because other tests name their ids), the summary's fromId
// names the abandoned leaf.
func (g *piGen) branch() {
	if len(g.path) < 4 {
		return
	}
	var fromID string
	switch {
	case !g.piBranch:
		fromID = g.path[len(g.path)-1]
		g.path = g.path[:1+g.rng.IntN(len(g.path)-2)]
	case g.chance(0.15):
		fromID, g.path = "root", nil
	default:
		g.path = g.path[:1+g.rng.IntN(len(g.path)-2)]
		fromID = g.path[len(g.path)-1]
	}
	if g.chance(0.7) {
		e := g.entry("branch_summary")
		e.set("fromId", fromID).set("summary", "Tried patching the writer; the golden test showed the key order changed, so went back.")
		if g.chance(0.5) {
			e.set("details", o("readFiles", []string{"pkg/events/jsonobj.go"}, "modifiedFiles", []string{}))
		}
		if g.version >= 3 && g.chance(0.2) {
			e.set("fromHook", true)
		}
		g.emit(e)
	}
}

// marshalNoEscape is json.Marshal without HTML escaping.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
