package embednats

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
