package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/events"
)

// The client commands that work on the log, run as a new user would: a
// `cairn up` process and `cairn` processes with only CAIRN_SERVER set, no
// --server and no --nats.

// cli runs the binary with CAIRN_SERVER naming u and no other CAIRN_*
// variable, and returns its exit status, stdout and stderr.
func (u *upProcess) cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "CAIRN_SERVER="+u.url, "CAIRN_NATS_CREDS="+u.creds)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("cairn %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

func (u *upProcess) mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := u.cli(t, args...)
	if code != 0 {
		t.Fatalf("cairn %s: exit %d: %s%s", strings.Join(args, " "), code, errOut, out)
	}
	return out
}

// eventuallyCLI runs the command until it succeeds and cond holds of its
// output, for reads of the read models, which trail the log.
func (u *upProcess) eventuallyCLI(t *testing.T, cond func(string) bool, args ...string) string {
	t.Helper()
	var out string
	kittest.Eventually(t, 30*time.Second, "cairn "+strings.Join(args, " ")+" as wanted", func() error {
		code, o, errOut := u.cli(t, args...)
		if out = o; code == 0 && cond(out) {
			return nil
		}
		return fmt.Errorf("exit %d\n%s%s", code, out, errOut)
	})
	return out
}

// promptedSession creates session sid with the CLI and prompts it once
// (a tool call and an answer).
func (u *upProcess) promptedSession(t *testing.T, sid string) {
	t.Helper()
	u.mustCLI(t, "session", "new", "--id", sid)
	if out := u.mustCLI(t, "prompt", sid, "please list files"); !strings.Contains(out, "I see the files.") {
		t.Fatalf("prompt output:\n%s", out)
	}
}

func TestE2EImportExportThroughTheGateway(t *testing.T) {
	u := startUp(t)
	in := filepath.Join(piDir, "v3-branchy.jsonl")
	if got := strings.TrimSpace(u.mustCLI(t, "import", in, "--id", "imp")); got != "imp" {
		t.Fatalf("import printed %q", got)
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := events.ReadPiFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(data), `"id":"`+h.ID+`"`, `"id":"imp"`, 1)
	if diff := jsonLinesDiff(u.mustCLI(t, "export", "imp"), want); diff != "" {
		t.Fatalf("export differs from the file: %s", diff)
	}
	jl := u.mustCLI(t, "export", "imp", "--format", "jsonl")
	if n := strings.Count(jl, "\n"); n != strings.Count(want, "\n") || !strings.Contains(jl, `"parentDigest":"sha256:`) {
		t.Fatalf("jsonl export: %d lines, parent digests %v", n, strings.Contains(jl, "parentDigest"))
	}
	// Its tree, branches and labels included, from the read model.
	tree := u.eventuallyCLI(t, func(s string) bool { return strings.Contains(s, "[checkpoint]") }, "tree", "imp")
	if !strings.HasPrefix(tree, "session imp  leaf ") || !strings.Contains(tree, "* 81c524ab") ||
		strings.Count(tree, "\n") != strings.Count(want, "\n") || !strings.Contains(tree, "\n    ") {
		t.Fatalf("tree of the import:\n%s", tree)
	}

	// The file's own id when --id is not given; a second import is refused.
	if got := strings.TrimSpace(u.mustCLI(t, "import", in)); got != h.ID {
		t.Fatalf("import without --id printed %q, want %q", got, h.ID)
	}
	if code, _, errOut := u.cli(t, "import", in, "--id", "imp"); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("importing over a session: exit %d %q", code, errOut)
	}
	if code, _, errOut := u.cli(t, "export", "nobody"); code != 1 || !strings.Contains(errOut, `no session "nobody"`) {
		t.Fatalf("export of no session: exit %d %q", code, errOut)
	}
}

func TestE2ELogAndTreeThroughTheGateway(t *testing.T) {
	u := startUp(t)
	u.promptedSession(t, "lt")
	es := u.entries(t, "lt")
	if code, out := u.call(t, "POST", "/v1/sessions/lt/commands?wait=applied", `{"type":"label","entryId":"`+es[1].ID+`","label":"asked"}`); code != 200 {
		t.Fatalf("label = %d %v", code, out)
	}

	out := u.mustCLI(t, "log", "lt")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(es)+1 || !strings.Contains(lines[0], "session") || !strings.Contains(out, `user "please list files"`) ||
		!strings.Contains(out, "call:ls") || !strings.Contains(out, `= "asked"`) {
		t.Fatalf("log (%d entries before the label):\n%s", len(es), out)
	}
	// The gateway's log is the one --nats reads.
	if direct := u.mustCLI(t, "log", "lt", "--nats", u.nats); direct != out {
		t.Fatalf("log through the gateway differs from --nats:\n%s\n%s", out, direct)
	}
	js := u.mustCLI(t, "log", "lt", "--json")
	var prev string
	for i, line := range strings.Split(strings.TrimSpace(js), "\n") {
		var l struct {
			Seq    uint64       `json:"seq"`
			Digest string       `json:"digest"`
			Entry  events.Entry `json:"entry"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.Seq == 0 || !strings.HasPrefix(l.Digest, "sha256:") {
			t.Fatalf("log --json line %d = %s (%v)", i, line, err)
		}
		if i > 0 && l.Entry.ParentDigest != prev {
			t.Fatalf("log --json line %d: parent digest %s, the line before's digest %s", i, l.Entry.ParentDigest, prev)
		}
		prev = l.Digest
	}

	// The tree comes from the read model: wait until it has the label.
	tree := u.eventuallyCLI(t, func(s string) bool { return strings.Contains(s, "[asked]") }, "tree", "lt")
	tl := strings.Split(strings.TrimSpace(tree), "\n")
	if !strings.HasPrefix(tl[0], "session lt  leaf ") || len(tl) != len(lines) {
		t.Fatalf("tree (%d lines, want %d):\n%s", len(tl), len(lines), tree)
	}
	// One conversation, no branch: every node is on the active path (the
	// label entry, appended last, is the leaf).
	starred := 0
	for _, l := range tl[1:] {
		if strings.HasPrefix(l, "* ") {
			starred++
		}
	}
	if starred != len(es) || !strings.Contains(tree, es[1].ID+` user "please list files" [asked]`) {
		t.Fatalf("tree: %d starred, want %d:\n%s", starred, len(es), tree)
	}
	if code, _, errOut := u.cli(t, "tree", "nobody"); code != 1 || !strings.Contains(errOut, "not_found") {
		t.Fatalf("tree of no session: exit %d %q", code, errOut)
	}
}

func TestE2EAuditVerifyThroughTheGateway(t *testing.T) {
	u := startUp(t)
	u.mustCLI(t, "import", filepath.Join(piDir, "v3-branchy.jsonl"), "--id", "br")
	u.mustCLI(t, "import", filepath.Join(piDir, "v3-coding.jsonl"), "--id", "co")
	u.promptedSession(t, "live")
	all := u.eventuallyCLI(t, func(s string) bool { return strings.Count(s, "ok   ") == 3 }, "audit", "verify")
	for _, sid := range []string{"br", "co", "live"} {
		if !strings.Contains(all, "ok   "+sid+"  ") {
			t.Fatalf("audit verify:\n%s", all)
		}
	}
	if one := u.mustCLI(t, "audit", "verify", "co"); !strings.HasPrefix(one, "ok   co  ") {
		t.Fatalf("audit verify co: %s", one)
	}

	// Remove an entry from the middle of "co" behind the log's back.
	nc, err := nats.Connect(u.nats, u.natsOpts(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := js.Stream(ctx, "CAIRN_SESSIONS")
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "cairn.session.default.co")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteMsg(ctx, m.Sequence-5); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := u.cli(t, "audit", "verify")
	if code != 1 || !strings.Contains(out, "FAIL co") || !strings.Contains(out, "removed") || !strings.Contains(out, "ok   br") ||
		!strings.Contains(out, "ok   live") || !strings.Contains(errOut, "1 of 3 sessions failed") {
		t.Fatalf("audit after a removal: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := u.cli(t, "audit", "verify", "co"); code != 1 || !strings.Contains(out, "FAIL co") {
		t.Fatalf("audit verify co after a removal: exit %d %s", code, out)
	}
	// Bytes that are no entry.
	if _, err := js.Publish(ctx, "cairn.session.default.br", []byte(`{"type":"message"`)); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := u.cli(t, "audit", "verify", "br"); code != 1 || !strings.Contains(out, "FAIL br") || !strings.Contains(out, "corrupt") {
		t.Fatalf("audit verify of a corrupt log: exit %d %s", code, out)
	}
}

func TestE2EReplayThroughTheGateway(t *testing.T) {
	u := startUp(t)
	u.promptedSession(t, "rp")
	whole := u.mustCLI(t, "replay", "rp")
	if !strings.HasPrefix(whole, "session rp  status idle") || !strings.Contains(whole, "message/toolResult") {
		t.Fatalf("replay:\n%s", whole)
	}
	if direct := u.mustCLI(t, "replay", "rp", "--nats", u.nats); direct != whole {
		t.Fatalf("replay through the gateway differs from --nats:\n%s\n%s", whole, direct)
	}
	// At the user message the session was running.
	es := u.entries(t, "rp")
	var r struct {
		Entries []struct {
			Seq   uint64          `json:"seq"`
			Entry json.RawMessage `json:"entry"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(u.mustCLI(t, "replay", "rp", "--json")), &r); err != nil || len(r.Entries) != len(es) {
		t.Fatalf("replay --json: %d entries (%v), want %d", len(r.Entries), err, len(es))
	}
	at := strconv.FormatUint(r.Entries[1].Seq, 10)
	then := u.mustCLI(t, "replay", "rp", "--until", at)
	if !strings.HasPrefix(then, "session rp  status running  leaf "+es[1].ID) || !strings.Contains(then, "through sequence "+at) {
		t.Fatalf("replay --until %s:\n%s", at, then)
	}
	if code, _, errOut := u.cli(t, "replay", "nobody"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("replay of no session: exit %d %q", code, errOut)
	}
	if code, _, errOut := u.cli(t, "replay", "rp", "--until", "yesterday"); code != 2 || !strings.Contains(errOut, "--until") {
		t.Fatalf("replay --until yesterday: exit %d %q", code, errOut)
	}
}
