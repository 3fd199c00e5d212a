package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go"
)

// syncBuffer is a log sink the services write to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestUpRunsEveryServiceAsItsOwnNATSUser runs the embedded platform, which
// requires credentials and connects each service as its own user, through
// a prompt with a tool call; the server refuses nothing the services do,
// refuses a connection without credentials, and no seed reaches the log.
func TestUpRunsEveryServiceAsItsOwnNATSUser(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(e2eScript), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	p, err := startPlatform(ctx, platformConfig{DataDir: filepath.Join(dir, "data"), HTTPAddr: "127.0.0.1:0",
		NATSListen: "127.0.0.1:0", Script: script, Model: "scripted/e2e", Logger: log})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := p.wait(); err != nil {
				t.Errorf("platform stopped with %v", err)
			}
		}
	}
	t.Cleanup(stop)

	// The door is shut to strangers.
	if nc, err := nats.Connect(p.NATS); err == nil {
		nc.Close()
		t.Fatal("the embedded NATS server accepted a connection without credentials")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("no credentials: %v, want an authorization violation", err)
	}

	cl, err := client.New(p.URL, client.WithToken(p.AdminKey.Reveal()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateSession(ctx, client.CreateSession{ID: "auth1"}, client.WaitApplied()); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Send(ctx, "auth1", client.Prompt("please list files")); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 60*time.Second, "the tool call's run ends with its answer", func() error {
		recs, err := cl.Records(ctx, "auth1")
		if err != nil {
			return err
		}
		var tool, answer bool
		for _, r := range recs {
			if m := r.Entry.Message; m != nil {
				tool = tool || m.Role == events.RoleToolResult && m.ToolName == "ls" && !m.IsError
				answer = answer || m.Role == events.RoleAssistant && strings.Contains(m.Content.Text(), "I see the files")
			}
		}
		if !tool || !answer {
			return errors.New("no ls result and answer yet")
		}
		return nil
	})
	if s, err := cl.Session(ctx, "auth1"); err != nil || s.ToolCalls != 1 {
		kittest.Eventually(t, 30*time.Second, "the projector counts the tool call", func() error {
			s, err := cl.Session(ctx, "auth1")
			if err != nil {
				return err
			}
			if s.ToolCalls != 1 {
				return errors.New("tool calls not projected yet")
			}
			return nil
		})
	}
	stop()

	out := logs.String()
	if permissionLines(out) != "" {
		t.Fatalf("a service was refused a permission doing its work:\n%s", permissionLines(out))
	}
	credDir := filepath.Join(dir, "data", "credentials")
	fi, err := os.Stat(credDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("credentials directory: %v %v, want mode 0700", fi, err)
	}
	files, _ := filepath.Glob(filepath.Join(credDir, "*.nk"))
	if len(files) != 7 {
		t.Fatalf("credential files %v, want one per service kind, the extension user and the admin", files)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v %v, want 0600", f, fi.Mode().Perm(), err)
		}
		seed, _ := os.ReadFile(f)
		if s := strings.TrimSpace(string(seed)); strings.Contains(out, s) || strings.Contains(out, s[:16]) {
			t.Fatalf("the seed of %s is in the log", f)
		}
	}
}
