package compactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/internal/natstest"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/scripted"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/services/compactor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The test binary doubles as a compactor process: with CAIRN_TEST_COMPACTOR
// set it runs compactor.Run over the script in CAIRN_TEST_SCRIPT, so tests
// start and kill -9 real processes.
func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"compactor": compactorMain})
}

func compactorMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	models, err := newModels([]byte(os.Getenv("CAIRN_TEST_SCRIPT")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ackMs, _ := strconv.Atoi(os.Getenv("CAIRN_TEST_ACKWAIT_MS"))
	c, err := compactor.New(compactor.Config{NATSURL: os.Getenv("CAIRN_TEST_NATS"), Models: models,
		Name: os.Getenv("CAIRN_TEST_NAME"), AckWait: time.Duration(ackMs) * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for !c.Ready() && ctx.Err() == nil {
			<-tick.C
		}
		fmt.Println("READY")
	}()
	err = c.Run(ctx)
	wg.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

var eventsNames = events.Names{}

// models resolves every scripted/<id> reference to one scripted provider.
type models struct{ p *scripted.Provider }

func newModels(script []byte) (models, error) {
	s, err := scripted.Parse(script)
	if err != nil {
		return models{}, err
	}
	return models{scripted.New(s)}, nil
}

func (m models) Resolve(ref string) (llm.Provider, llm.Model, error) {
	const prefix = scripted.Name + "/"
	if len(ref) <= len(prefix) || ref[:len(prefix)] != prefix {
		return nil, llm.Model{}, fmt.Errorf("unknown model %q", ref)
	}
	return m.p, m.p.Model(ref[len(prefix):]), nil
}

// platform is an embedded NATS server with the streams of the protocol.
type platform struct {
	url string
	nc  *nats.Conn
	js  jetstream.JetStream
}

func newPlatform(t testing.TB, opts ...natstest.Option) *platform {
	t.Helper()
	srv, nc, js := natstest.RunProvisioned(t, eventsNames, provision.Options{}, opts...)
	return &platform{url: srv.ClientURL(), nc: nc, js: js}
}

// startCompactor runs an in-process compactor until the test ends.
func (p *platform) startCompactor(t testing.TB, m compactor.Models, name string) {
	t.Helper()
	c, err := compactor.New(compactor.Config{NATSURL: p.url, Models: m, Name: name, AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Run(t, context.Background(), "compactor "+name, c.Run)
	waitFor(t, "compactor ready", c.Ready)
}

// waitFor polls cond until it holds, failing the test after 30s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	kittest.Eventually(t, 30*time.Second, what, cond)
}
