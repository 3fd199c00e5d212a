package events

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The decoders and the encoders were each rewritten once (a span scanner
// instead of encoding/json into maps at every level; an appending writer
// instead of json.Marshal per member), and checked then against the code
// they replaced by differential tests. Those old implementations are gone;
// what they agreed on is frozen in testdata/outcomes (first written with the
// old code checking every input; rewritten since only where error texts
// became Cairn's own), and the tests here hold today's code to it:
//
//   - decode.txt: every decoder on every input of testdata/fuzz, every
//     golden file and every pi session file, with its outcome in full (the
//     canonical bytes it encodes to, or the error);
//   - digests.txt: the outcomes of generated inputs, one line per group:
//     every line of the pi sessions through every decoder, every value of
//     the mutation seeds replaced by each of a set of JSON values (and
//     spread with whitespace), each entry seed cut short at every byte, and
//     each member of every decoded seed set to each of a set of values that
//     encoders must write with care. A line gives which inputs were
//     accepted (o) and refused (.), and digests of the accepted outputs and
//     of the errors, so a change shows which group it touched;
//   - values.txt: the encoders on values built from the FuzzEncodeValues
//     seeds.
//
// Run go test -update to rewrite them after a deliberate change; the diff
// then shows what changed.

// codec is one decoder with the encoder of what it decodes: decode returns a
// pointer to the decoded value, encode takes one.
type codec struct {
	name   string
	decode func([]byte) (any, error)
	encode func(any) ([]byte, error)
}

func codecOf[T any](name string, decode func([]byte) (T, error), encode func(*T) ([]byte, error)) codec {
	return codec{
		name: name,
		decode: func(b []byte) (any, error) {
			v, err := decode(b)
			return &v, err
		},
		encode: func(v any) ([]byte, error) { return encode(v.(*T)) },
	}
}

func unmarshalled[T any, P interface {
	*T
	UnmarshalJSON([]byte) error
}](b []byte) (T, error) {
	var v T
	err := P(&v).UnmarshalJSON(b)
	return v, err
}

func readPiBytes(b []byte) (piFile, error) {
	h, e, err := ReadPiFile(bytes.NewReader(b))
	return piFile{h, e}, err
}

// codecs are every decoder of the package, and two encoders that write a
// decoded value where the encoders of envelopes put it (a message in an
// event, a block in a tool result).
func codecs() []codec {
	return []codec{
		codecOf("entry", DecodeEntry, func(e *Entry) ([]byte, error) { return e.MarshalJSON() }),
		codecOf("message", unmarshalled[Message], func(m *Message) ([]byte, error) { return m.MarshalJSON() }),
		codecOf("event-message", unmarshalled[Message], func(m *Message) ([]byte, error) {
			return Event{Type: EvTurnEnd, Message: m, ToolResults: []Message{*m}, Partial: m}.Encode()
		}),
		codecOf("block", unmarshalled[Block], func(b *Block) ([]byte, error) { return b.MarshalJSON() }),
		codecOf("toolresult-block", unmarshalled[Block], func(b *Block) ([]byte, error) {
			return ToolResult{Content: []Block{*b, *b}}.Encode()
		}),
		codecOf("content", unmarshalled[Content], func(c *Content) ([]byte, error) { return c.MarshalJSON() }),
		codecOf("usage", unmarshalled[Usage], func(u *Usage) ([]byte, error) { return u.MarshalJSON() }),
		codecOf("cost", unmarshalled[Cost], func(c *Cost) ([]byte, error) { return c.MarshalJSON() }),
		codecOf("command", DecodeCommand, func(c *Command) ([]byte, error) { return c.MarshalJSON() }),
		codecOf("event", DecodeEvent, func(ev *Event) ([]byte, error) { return ev.Encode() }),
		codecOf("toolcall", DecodeToolCall, func(c *ToolCall) ([]byte, error) { return c.Encode() }),
		codecOf("toolresult", DecodeToolResult, func(r *ToolResult) ([]byte, error) { return r.Encode() }),
		codecOf("pi", readPiBytes, func(p *piFile) ([]byte, error) {
			var b bytes.Buffer
			err := WritePiFile(&b, p.header, p.entries)
			return b.Bytes(), err
		}),
	}
}

func codecNamed(t testing.TB, name string) codec {
	for _, c := range codecs() {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no codec %q", name)
	return codec{}
}

// result is what one codec made of one input.
type result struct {
	ok  bool
	out []byte // the canonical encoding, when ok
	err string // the decode error, or the encode error when ok
}

func run(c codec, in []byte) result {
	v, err := c.decode(in)
	if err != nil {
		return result{err: err.Error()}
	}
	out, err := c.encode(v)
	if err != nil {
		return result{ok: true, err: "encode: " + err.Error()}
	}
	return result{ok: true, out: out}
}

// format writes r as a line of decode.txt: the output in full (= when it is
// the input itself), or its digest when it is long.
func (r result) format(in []byte) string {
	switch {
	case !r.ok:
		return "err " + strconv.Quote(r.err)
	case r.err != "":
		return "ok, " + strconv.Quote(r.err)
	case bytes.Equal(r.out, bytes.TrimSpace(in)):
		return "ok ="
	case len(r.out) > 2048:
		return fmt.Sprintf("ok %d bytes sha256:%s", len(r.out), digest(r.out))
	}
	return "ok " + strconv.Quote(string(r.out))
}

// digestOrNone is the digest of b, or - if b is empty.
func digestOrNone(b []byte) string {
	if len(b) == 0 {
		return "-"
	}
	return digest(b)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// group collects the results of many inputs into one line of digests.txt.
type group struct {
	pattern    []byte
	oks, errs  []byte // what the digests are taken over
	accepted   int
	numResults int
}

func (g *group) add(r result) {
	g.numResults++
	if r.ok && r.err == "" {
		g.accepted++
		g.pattern = append(g.pattern, 'o')
		g.oks = append(append(g.oks, r.out...), 0)
		return
	}
	g.pattern = append(g.pattern, '.')
	g.errs = append(append(g.errs, r.err...), 0)
}

func (g *group) line(name string) string {
	p := string(g.pattern)
	if len(p) > 64 {
		p = fmt.Sprintf("%do/%d.", g.accepted, g.numResults-g.accepted)
	}
	return fmt.Sprintf("%s %s ok:%s err:%s", name, p, digestOrNone(g.oks), digestOrNone(g.errs))
}

const outcomesDir = "testdata/outcomes"

// checkOutcomes compares lines with the file, or rewrites it with -update.
func checkOutcomes(t *testing.T, file, header string, lines []string) {
	t.Helper()
	path := filepath.Join(outcomesDir, file)
	if *update {
		if err := os.MkdirAll(outcomesDir, 0o755); err != nil {
			t.Fatal(err)
		}
		data := header + strings.Join(lines, "\n") + "\n"
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	var want []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if l := sc.Text(); !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range max(len(lines), len(want)) {
		var got, w string
		if i < len(lines) {
			got = lines[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if got != w {
			if bad++; bad <= 10 {
				t.Errorf("%s line %d:\n got %s\nwant %s", path, i+1, got, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d lines differ", path, bad)
	}
}

// outcomeInputs returns the inputs of decode.txt by name: the fuzz corpus,
// the golden files and the pi sessions.
func outcomeInputs(t *testing.T) (names []string, inputs [][]byte) {
	t.Helper()
	corpus, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	for _, p := range corpus {
		for i, in := range corpusInputs(t, p) {
			names = append(names, fmt.Sprintf("%s #%d", filepath.ToSlash(p), i))
			inputs = append(inputs, in)
		}
	}
	for _, p := range goldenFiles(t) {
		names = append(names, filepath.ToSlash(p))
		inputs = append(inputs, readFile(t, p))
	}
	pis, _ := filepath.Glob(filepath.Join(piDir, "*.jsonl"))
	for _, p := range pis {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.ToSlash(p))
		inputs = append(inputs, b)
	}
	return names, inputs
}

// corpusInputs returns the []byte inputs of a fuzz corpus file.
func corpusInputs(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if lit, ok := strings.CutPrefix(line, "[]byte("); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			out = append(out, []byte(s))
		}
	}
	return out
}

// goldenFiles returns the files under testdata/golden, sorted.
func goldenFiles(t testing.TB) []string {
	var paths []string
	err := filepath.WalkDir(goldenDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// TestDecodeOutcomes runs every codec on every input of decode.txt.
func TestDecodeOutcomes(t *testing.T) {
	names, inputs := outcomeInputs(t)
	var lines []string
	for i, in := range inputs {
		lines = append(lines, "== "+names[i])
		for _, c := range codecs() {
			lines = append(lines, c.name+" "+run(c, in).format(in))
		}
	}
	checkOutcomes(t, "decode.txt", "# Every codec on every input: go test -update rewrites this file (outcomes_test.go).\n", lines)
}

// seed is an input the mutation tests start from, with the codec that
// decodes it.
type seed struct {
	name, kind string
	data       []byte
}

// mutationSeeds returns the golden files and the first lines of two pi
// sessions (one of version 1, one of version 3).
func mutationSeeds(t testing.TB) []seed {
	kinds := map[string]string{"entry": "entry", "message": "message", "block": "block", "command": "command", "event": "event",
		"toolcall.json": "toolcall", "toolresult.json": "toolresult"}
	var seeds []seed
	for _, p := range goldenFiles(t) {
		rel, _ := filepath.Rel(goldenDir, p)
		first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		kind, ok := kinds[first]
		if !ok {
			t.Fatalf("no codec for %s", p)
		}
		seeds = append(seeds, seed{filepath.ToSlash(rel), kind, readFile(t, p)})
	}
	for _, name := range []string{"v1-linear.jsonl", "v3-coding.jsonl"} {
		p := filepath.Join(piDir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for line := range bytes.Lines(b) {
			if n++; n > 17 {
				break
			}
			seeds = append(seeds, seed{fmt.Sprintf("pi/%s:%d", name, n), "entry", bytes.TrimSpace(line)})
		}
	}
	return seeds
}

// replacements are the values the mutations put in place of each value of a
// seed.
var replacements = []string{`null`, `0`, `-0`, `-1`, `1.5`, `1e400`, `1234567890123456789`, `12345678901234567890`, `""`, `"x"`,
	`"\u00e9\ud800"`, `true`, `[]`, `{}`, `[null]`, `["a",1]`, `{"type":"text","text":"t"}`, "\"<a&b>\u2028\"", "{\"k\":[\"<&>\u2029\",2]}"}

// TestDecodeDigests checks the groups of digests.txt made by decoding: every
// line of every pi session through every codec, the seeds with each value
// replaced, and the entry seeds cut short.
func TestDecodeDigests(t *testing.T) {
	var lines []string
	pis, _ := filepath.Glob(filepath.Join(piDir, "*.jsonl"))
	for _, p := range pis {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range codecs() {
			var g group
			for line := range bytes.Lines(b) {
				if line = bytes.TrimSpace(line); len(line) > 0 {
					g.add(run(c, line))
				}
			}
			lines = append(lines, g.line("lines pi/"+filepath.Base(p)+" "+c.name))
		}
	}
	for _, s := range mutationSeeds(t) {
		c := codecNamed(t, s.kind)
		for _, sp := range valueSpans(s.data) {
			var g group
			for _, r := range replacements {
				in := slices.Concat(s.data[:sp.start], []byte(r), s.data[sp.end:])
				g.add(run(c, in))
				if s.kind != "entry" {
					spread := spreadOut(in)
					g.add(run(c, spread))
				}
			}
			lines = append(lines, g.line("replace "+s.name+" "+sp.path))
		}
		if s.kind == "entry" && len(s.data) < 400 {
			var g group
			for n := range len(s.data) {
				g.add(run(c, s.data[:n]))
			}
			lines = append(lines, g.line("cut "+s.name))
		}
	}
	checkOutcomes(t, "decode-digests.txt", "# Groups of decoded inputs: go test -update rewrites this file (outcomes_test.go).\n", lines)
}

// span is where a value of a JSON document is, and its path.
type span struct {
	path       string
	start, end int
}

// valueSpans returns every value inside doc, valid JSON, in document order
// (doc itself left out). Object members are named by their key as written.
func valueSpans(doc []byte) []span {
	var spans []span
	var value func(i int, path string) int
	ws := func(i int) int {
		for i < len(doc) && strings.IndexByte(" \t\r\n", doc[i]) >= 0 {
			i++
		}
		return i
	}
	str := func(i int) int { // i at the quote; returns past the closing one
		for i++; doc[i] != '"'; i++ {
			if doc[i] == '\\' {
				i++
			}
		}
		return i + 1
	}
	value = func(i int, path string) int {
		start := i
		switch doc[i] {
		case '"':
			i = str(i)
		case '{', '[':
			open := doc[i]
			i = ws(i + 1)
			for n := 0; doc[i] != '}' && doc[i] != ']'; n++ {
				p := path + "[" + strconv.Itoa(n) + "]"
				if open == '{' {
					k := str(i)
					p = strings.TrimPrefix(path+"."+string(doc[i+1:k-1]), ".")
					i = ws(ws(k) + 1) // past the colon
				}
				i = ws(value(i, p))
				if doc[i] == ',' {
					i = ws(i + 1)
				}
			}
			i++
		default:
			for i < len(doc) && strings.IndexByte(",]} \t\r\n", doc[i]) < 0 {
				i++
			}
		}
		if path != "" {
			spans = append(spans, span{path, start, i})
		}
		return i
	}
	value(ws(0), "")
	return spans
}

// spreadOut returns doc with whitespace around every structural character
// outside strings.
func spreadOut(doc []byte) []byte {
	var out []byte
	in := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case in && c == '\\':
			out = append(out, c, doc[i+1])
			i++
			continue
		case c == '"':
			in = !in
		case !in && strings.IndexByte("{}[],:", c) >= 0:
			out = append(out, "\n \t"...)
			out = append(out, c)
			out = append(out, ' ')
			continue
		}
		out = append(out, c)
	}
	return out
}

// Values the encode mutations put into each member of a decoded value.
var (
	trickyStrings = []string{"", "plain", "<a href=\"x\">&amp;</a>", "x\u2028y\u2029z", "\xff\xfe", "a\xe2\x80", "\xed\xa0\x80",
		"\x00\x01\x1f\x7f", "\b\f\n\r\t\"\\/", "é😀\u00a0", "\ufffd", "<<<>>>&&&" + "\u2028"}
	trickyFloats = []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e20, 1e21, 9.999999999999999e20, -1e21, 1e-6, 9.99e-7, 1e-7,
		1.5e-9, 123456789.123, math.MaxFloat64, 5e-324, 1 << 53, 1<<53 + 1, 1e100, math.NaN(), math.Inf(1), math.Inf(-1)}
	trickyInts = []int64{0, 1, -1, 1 << 53, 1<<53 + 1, -(1 << 53), math.MaxInt64, math.MinInt64}
	trickyRaws = [][]byte{nil, {}, []byte(`{}`), []byte(" { \"a\" : [ 1 , 2 ] , \"b\" : \"x y\" } "),
		[]byte("\"<&>\u2028\xff\""), []byte(`null`), []byte(`1e400`), []byte(`-0`),
		[]byte(`invalid`), []byte(`{"a":}`), []byte("   "), []byte(`[1,2]`)}
	trickyExtras = []Extra{nil, {}, {"<k>": []byte(`1`)}, {"\xff": []byte(`"x"`), "\u2028": []byte(`2`)},
		{"b": []byte(" [ 1 ] "), "a": []byte(`true`), "c": []byte(`"<>"`)}, {"k": []byte(`bad`)}}
	trickyStringLists = [][]string{nil, {}, {"a", "<b>", "\xff"}}
	trickyStringMaps  = []map[string]string{nil, {}, {"<k>": "v&", "a": "\u2028", "\xff": "x"}}
)

// eachMutation calls check after setting each member of v, at every depth,
// to each of the tricky values of its type, one at a time, with the member's
// path; v is restored after.
func eachMutation(v reflect.Value, path string, check func(path string)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			eachMutation(v.Elem(), path, check)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				p := strings.TrimPrefix(path+"."+v.Type().Field(i).Name, ".")
				mutateOne(f, func() { check(p) })
				eachMutation(f, p, check)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			p := path + "[" + strconv.Itoa(i) + "]"
			mutateOne(v.Index(i), func() { check(p) })
			eachMutation(v.Index(i), p, check)
		}
	}
}

func mutateOne(f reflect.Value, check func()) {
	saved := reflect.New(f.Type()).Elem()
	saved.Set(f)
	defer f.Set(saved)
	try := func(x any) {
		f.Set(reflect.ValueOf(x).Convert(f.Type()))
		check()
	}
	switch f.Type() {
	case reflect.TypeFor[Extra]():
		for _, x := range trickyExtras {
			try(x)
		}
		return
	case reflect.TypeFor[[]string]():
		for _, x := range trickyStringLists {
			try(x)
		}
		return
	case reflect.TypeFor[map[string]string]():
		for _, x := range trickyStringMaps {
			try(x)
		}
		return
	case reflect.TypeFor[*string]():
		try((*string)(nil))
		for _, s := range trickyStrings[:4] {
			try(&s)
		}
		return
	case reflect.TypeFor[*int64]():
		try((*int64)(nil))
		for _, n := range trickyInts {
			try(&n)
		}
		return
	}
	if f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8 { // raw JSON
		for _, r := range trickyRaws {
			try(r)
		}
		return
	}
	switch f.Kind() {
	case reflect.String:
		for _, s := range trickyStrings {
			try(s)
		}
	case reflect.Float64:
		for _, x := range trickyFloats {
			try(x)
		}
	case reflect.Int, reflect.Int64:
		for _, n := range trickyInts {
			if f.OverflowInt(n) {
				continue
			}
			try(n)
		}
	case reflect.Uint64:
		for _, n := range []uint64{0, 1, 1 << 53, math.MaxUint64} {
			try(n)
		}
	case reflect.Bool:
		try(!f.Bool())
	case reflect.Slice:
		if f.IsNil() {
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		} else {
			f.Set(reflect.Zero(f.Type()))
		}
		check()
	case reflect.Pointer:
		if !f.IsNil() {
			f.Set(reflect.Zero(f.Type()))
			check()
		}
	}
}

// TestEncodeDigests checks the groups of digests.txt made by encoding: each
// member of each decoded seed set to each tricky value of its type.
func TestEncodeDigests(t *testing.T) {
	var lines []string
	checks := 0
	for _, s := range mutationSeeds(t) {
		for _, c := range codecs() {
			if c.name == "pi" {
				continue
			}
			v, err := c.decode(s.data)
			if err != nil {
				continue
			}
			groups := map[string]*group{}
			var order []string
			eachMutation(reflect.ValueOf(v), "", func(path string) {
				checks++
				g := groups[path]
				if g == nil {
					g = new(group)
					groups[path] = g
					order = append(order, path)
				}
				out, err := c.encode(v)
				if err != nil {
					g.add(result{err: err.Error()})
				} else {
					g.add(result{ok: true, out: out})
				}
			})
			for _, p := range order {
				lines = append(lines, groups[p].line("set "+s.name+" "+c.name+" "+p))
			}
		}
	}
	if checks < 10000 {
		t.Fatalf("only %d mutations checked", checks)
	}
	checkOutcomes(t, "encode-digests.txt", "# Groups of encoded values: go test -update rewrites this file (outcomes_test.go).\n", lines)
}

// FuzzDecoders runs every codec on the fuzzer's input: when one accepts it,
// the canonical form it gives is a fixed point (encode → decode → encode
// gives the same bytes). Its corpus holds the inputs a span scanner could
// get wrong; decode.txt keeps what each codec made of them.
func FuzzDecoders(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range codecs() {
			v, err := c.decode(data)
			if err != nil {
				continue
			}
			b1, err := c.encode(v)
			if err != nil {
				t.Fatalf("%s: encode of a decoded value failed: %v", c.name, err)
			}
			if c.name == "event-message" || c.name == "toolresult-block" {
				continue // written inside an envelope: not what c decodes
			}
			v2, err := c.decode(b1)
			if err != nil {
				t.Fatalf("%s: decode of the canonical form %s failed: %v", c.name, b1, err)
			}
			if b2, err := c.encode(v2); err != nil || !bytes.Equal(b1, b2) {
				t.Fatalf("%s: encode→decode→encode is not stable:\n1: %s\n2: %s %v", c.name, b1, b2, err)
			}
		}
	})
}

// namedValue is a value to encode with the encoder of a codec.
type namedValue struct {
	name, codec string
	v           any // a pointer
}

// encodeValues builds values of every type from a string, a number, an
// integer, raw JSON and a key, put in every place they can go (the
// arguments of FuzzEncodeValues).
func encodeValues(s string, x float64, n int64, raw []byte, key string) []namedValue {
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
	var out []namedValue
	for i := range msgs {
		out = append(out, namedValue{"message " + msgs[i].Role, "message", &msgs[i]},
			namedValue{"message " + msgs[i].Role + " in an event", "event-message", &msgs[i]})
	}
	for i := range blocks {
		out = append(out, namedValue{"block " + blocks[i].Type, "block", &blocks[i]},
			namedValue{"block " + blocks[i].Type + " in a tool result", "toolresult-block", &blocks[i]})
	}
	out = append(out, namedValue{"usage", "usage", usage})
	for _, typ := range allEntryTypes {
		e := Entry{V: int(n), Type: typ, ID: s, ParentID: &s, Timestamp: s, CommandID: s, ParentDigest: s, Version: int(n),
			Cwd: s, ParentSession: s, Model: s, ThinkingLevel: s, SystemPrompt: s, Tools: []string{s, key}, Labels: map[string]string{s: key, key: s},
			Tenant: s, Message: &msgs[1], Provider: s, ModelID: s, Summary: s, FirstKeptEntryID: s, TokensBefore: n, FromID: s,
			Details: rawMsg, FromHook: true, TargetID: &key, Label: s, CustomType: s, Data: rawMsg, Content: msgs[0].Content,
			Display: true, Name: s, Reason: s, Code: s, Extra: extra, Retry: &RetryMark{Attempt: int(n), DelayMs: n, Code: s}}
		out = append(out, namedValue{"entry " + typ, "entry", &e})
	}
	ev := Event{Type: s, SessionID: s, Seq: uint64(n), Time: s, Message: &msgs[1], Delta: &Delta{Kind: s, ContentIndex: int(n), Delta: s, ToolCallID: s, ToolName: s},
		ToolResults: msgs[2:3], Messages: msgs, ToolCallID: s, ToolName: s, Args: rawMsg, Partial: &msgs[2], Result: &msgs[3], IsError: true,
		Queue: &Queue{Steering: []string{s}}, Retry: &Retry{Attempt: int(n), MaxAttempts: 3, DelayMs: n, ErrorMessage: s, Success: true},
		Compaction: &Compaction{Reason: s, TokensBefore: n, Summary: s, EntryID: s, Aborted: true, Error: s}, Hook: s, CommandID: s, Error: s}
	tc := ToolCall{SessionID: s, ToolCallID: s, Name: s, Arguments: rawMsg, Workspace: s, Idempotent: true, TimeoutMs: n, Owner: s, Dispatched: s}
	tr := ToolResult{SessionID: s, ToolCallID: s, ToolName: s, Content: blocks, Details: rawMsg, IsError: true, Terminate: true, Interrupted: true, DurationMs: n, Worker: s}
	cmd := Command{V: int(n), ID: s, Type: CmdNavigate, SessionID: s, Model: s, SystemPrompt: s, Tools: []string{}, Workspace: s, Text: s,
		Images: []Image{{Data: s, MimeType: s}}, WhenBusy: BusyPolicy(s), Summarize: true, Instructions: s, Level: s, Label: s, Extra: extra}
	cmd2 := cmd
	cmd2.EntryID, cmd2.Tools = &s, []string{s}
	return append(out, namedValue{"event", "event", &ev}, namedValue{"tool call", "toolcall", &tc},
		namedValue{"tool result", "toolresult", &tr}, namedValue{"command navigate to the root", "command", &cmd},
		namedValue{"command navigate to an entry", "command", &cmd2})
}

// encodeValueSeeds are the seeds of FuzzEncodeValues.
var encodeValueSeeds = []struct {
	s   string
	x   float64
	n   int64
	raw []byte
	key string
}{
	{"x", 1.5, 1, []byte(`{}`), "k"},
	{"<a>&\u2028\xff\x01", 1e21, 1<<53 + 1, []byte(" { \"a\" : 1 } "), "<\xff>"},
	{"", math.Copysign(0, -1), -1, []byte(`bad`), ""},
	{"é", 1e-7, math.MaxInt64, nil, "a"},
}

// TestEncodeValues checks what the encoders write for the values built from
// the seeds of FuzzEncodeValues, in values.txt.
func TestEncodeValues(t *testing.T) {
	var lines []string
	for i, sd := range encodeValueSeeds {
		for _, nv := range encodeValues(sd.s, sd.x, sd.n, sd.raw, sd.key) {
			var r result
			out, err := codecNamed(t, nv.codec).encode(nv.v)
			if err != nil {
				r = result{err: err.Error()}
			} else {
				r = result{ok: true, out: out}
			}
			lines = append(lines, fmt.Sprintf("seed %d, %s: %s", i, nv.name, r.format(nil)))
		}
	}
	checkOutcomes(t, "values.txt", "# The encoders on the values of FuzzEncodeValues's seeds: go test -update rewrites this file (outcomes_test.go).\n", lines)
}

// FuzzEncodeValues encodes values built from the fuzzer's string, number,
// integer, raw JSON and key: an encoder writes valid JSON or fails (raw JSON
// that is not valid is written as it is, in entries, messages and blocks),
// and the canonical form of what its decoder reads back is a fixed point.
func FuzzEncodeValues(f *testing.F) {
	for _, sd := range encodeValueSeeds {
		f.Add(sd.s, sd.x, sd.n, sd.raw, sd.key)
	}
	f.Fuzz(func(t *testing.T, s string, x float64, n int64, raw []byte, key string) {
		for _, nv := range encodeValues(s, x, n, raw, key) {
			c := codecNamed(t, nv.codec)
			out, err := c.encode(nv.v)
			if err != nil {
				continue
			}
			if json.Valid(raw) && !json.Valid(out) {
				t.Fatalf("%s: wrote invalid JSON %q", nv.name, out)
			}
			if nv.codec == "event-message" || nv.codec == "toolresult-block" {
				continue // written inside an envelope: not what c decodes
			}
			v, err := c.decode(out)
			if err != nil {
				continue // a value its decoder refuses (an empty id, ...)
			}
			b1, err := c.encode(v)
			if err != nil {
				t.Fatalf("%s: encode of a decoded value failed: %v", nv.name, err)
			}
			v, err = c.decode(b1)
			if err != nil {
				t.Fatalf("%s: decode of the canonical form %s failed: %v", nv.name, b1, err)
			}
			if b2, err := c.encode(v); err != nil || !bytes.Equal(b1, b2) {
				t.Fatalf("%s: encode→decode→encode is not stable:\n1: %s\n2: %s %v", nv.name, b1, b2, err)
			}
		}
	})
}
