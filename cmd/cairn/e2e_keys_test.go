package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/services/gateway"
)

// cairnAs runs a cairn client process against u with env added to a clean
// environment (no recorded key unless XDG_CONFIG_HOME is passed).
func (u *upProcess) cairnAs(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), args...)
	cmd.Env = append([]string{"CAIRN_SERVER=" + u.url, "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(),
		"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Keys over real processes: `cairn up` made the admin key (0600) and the
// CLI finds it; keys are created, used with --token and CAIRN_TOKEN,
// refused by role, revoked; commands, their status and the tool-call
// audit name the key that sent them.
func TestE2EKeysAndPrincipals(t *testing.T) {
	u := startUp(t)
	keyFile := filepath.Join(u.data, "admin.key")
	info, err := os.Stat(keyFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("admin key %s: %v, mode %v; want mode 0600", keyFile, err, info.Mode().Perm())
	}
	admin, err := readKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	// Without a token (a clean config directory), the gateway says so.
	if out, err := u.cairnAs(t, nil, "sessions"); err == nil || !strings.Contains(out, "no credentials") || !strings.Contains(out, "401") {
		t.Fatalf("sessions without a token: %v %s", err, out)
	}
	// The recorded key serves the user who ran `cairn up`.
	recorded := []string{"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME")}
	member, err := u.cairnAs(t, recorded, "keys", "create", "--role", "member", "--name", "e2e member")
	if err != nil {
		t.Fatalf("keys create: %v %s", err, member)
	}
	member = lastLine(member)
	viewer, err := u.cairnAs(t, []string{"CAIRN_TOKEN=" + admin.Reveal()}, "keys", "create", "--role", "viewer")
	if err != nil {
		t.Fatalf("keys create with CAIRN_TOKEN: %v %s", err, viewer)
	}
	viewer = lastLine(viewer)
	memberID, _, err := splitKey(member)
	if err != nil {
		t.Fatalf("created token %q: %v", member, err)
	}
	viewerID, _, _ := splitKey(viewer)

	if out, err := u.cairnAs(t, nil, "--token", member, "session", "new", "--id", "k1"); err != nil || strings.TrimSpace(out) != "k1" {
		t.Fatalf("a member creates a session: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, []string{"CAIRN_TOKEN=" + member}, "prompt", "k1", "please list files"); err != nil || !strings.Contains(out, "I see the files.") {
		t.Fatalf("a member prompts: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", viewer, "prompt", "k1", "hello"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("a viewer prompts: %v %s, want 403 forbidden", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", member, "keys", "create", "--role", "viewer"); err == nil || !strings.Contains(out, "forbidden") {
		t.Errorf("a member creates a key: %v %s, want 403 forbidden", err, out)
	}
	list, err := u.cairnAs(t, recorded, "keys", "list")
	if err != nil || !strings.Contains(list, memberID) || !strings.Contains(list, "e2e member") || strings.Contains(list, member[len("cairn_")+17:]) {
		t.Fatalf("keys list: %v\n%s", err, list)
	}
	if out, err := u.cairnAs(t, recorded, "keys", "revoke", viewerID); err != nil || !strings.Contains(out, "revoked "+viewerID) {
		t.Fatalf("keys revoke: %v %s", err, out)
	}
	if out, err := u.cairnAs(t, nil, "--token", viewer, "sessions"); err == nil || !strings.Contains(out, "unknown or revoked API key") {
		t.Errorf("a revoked key: %v %s", err, out)
	}

	// Who did it: the log, the command status and the audit name the member's key.
	principal := "key:" + memberID
	var es []string
	for _, e := range u.entries(t, "k1") {
		if e.CommandID != "" {
			es = append(es, e.Type+" "+e.Principal)
			if e.Principal != principal {
				t.Errorf("entry %s (%s) names principal %q, want %q", e.ID, e.Type, e.Principal, principal)
			}
		}
	}
	if len(es) < 2 {
		t.Errorf("entries naming a command: %v, want the header and the prompt", es)
	}
	code, st := u.call(t, "GET", "/v1/sessions/k1/commands/"+create1(t, u, "k1"), "")
	if code != 200 || st["principal"] != principal {
		t.Errorf("command status = %d %v, want principal %s", code, st, principal)
	}
	kittest.Eventually(t, 30*time.Second, "the audit names the member", func() bool {
		code, out := u.call(t, "GET", "/v1/audit/tool-calls?session=k1&principal="+principal, "")
		calls, _ := out["toolCalls"].([]any)
		return code == 200 && len(calls) == 1 && calls[0].(map[string]any)["principal"] == principal
	})
}

// create1 is the id of the command that created session sid.
func create1(t *testing.T, u *upProcess, sid string) string {
	t.Helper()
	for _, e := range u.entries(t, sid) {
		if e.Type == "session" {
			return e.CommandID
		}
	}
	t.Fatalf("session %s has no header", sid)
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// splitKey returns a token's id.
func splitKey(tok string) (string, string, error) {
	if _, _, err := gateway.ParseKey(secret.Secret(tok)); err != nil {
		return "", "", err
	}
	return tok[len("cairn_") : len("cairn_")+16], tok[len("cairn_")+17:], nil
}
