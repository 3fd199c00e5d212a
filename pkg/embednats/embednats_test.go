package embednats

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

func TestStartKeepsDataAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	publish := func() uint64 {
		s, err := Start(Config{DataDir: dir, Listen: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Shutdown()
		nc, err := s.Connect()
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		// Another process would connect over TCP.
		tcp, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		tcp.Close()
		js, _ := jetstream.New(nc)
		if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}}); err != nil {
			t.Fatal(err)
		}
		ack, err := js.Publish(ctx, "s", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	if seq := publish(); seq != 1 {
		t.Fatalf("first run: sequence %d", seq)
	}
	if seq := publish(); seq != 2 {
		t.Fatalf("after restart: sequence %d, want 2 (data kept)", seq)
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "DataDir is required"},
		{Config{DataDir: t.TempDir(), Listen: "nohost"}, `listen address "nohost"`},
		{Config{DataDir: t.TempDir(), Listen: "127.0.0.1:99999"}, "port must be 0-65535"},
	} {
		_, err := Start(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestStartRequiresItsUsers(t *testing.T) {
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	s, err := Start(Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Logger: log,
		Users: []User{{Name: "reader", Nkey: pub, Publish: []string{"ok"}, Subscribe: []string{"_INBOX.>"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	if nc, err := s.Connect(); err == nil {
		nc.Close()
		t.Fatal("an in-process connection without credentials was accepted")
	}
	nc, err := s.Connect(nats.Nkey(pub, kp.Sign))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Publish("forbidden", nil); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 5*time.Second, "the server logs the violation", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), `Publish Violation`) && strings.Contains(logs.String(), `forbidden`)
	})
	if _, err := Start(Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Users: []User{{Name: "x", Nkey: "not-a-key"}}}); err == nil ||
		!strings.Contains(err.Error(), `user "x"`) {
		t.Fatalf("a bad key: %v", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
