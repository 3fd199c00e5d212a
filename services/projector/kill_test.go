package projector

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestMain lets the test binary run as a projector process for the kill test.
func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"projector": child})
}

// child runs a projector on CAIRN_NATS and CAIRN_DIR, prints "addr <host:port>"
// of its ops handler, and stops on SIGTERM.
func child() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	nc, err := nats.Connect(os.Getenv("CAIRN_NATS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	p, err := New(Config{JetStream: js, Dir: os.Getenv("CAIRN_DIR"), BatchSize: 64})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := &http.Server{Handler: p.OpsHandler()}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) }) // ErrServerClosed at srv.Close
	fmt.Printf("addr %s\n", ln.Addr())
	err = p.Run(ctx)
	_ = srv.Close() // the child is on its way out; its exit status is p.Run's
	wg.Wait()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type childProc struct {
	cmd  *exec.Cmd
	addr string
}

func startChild(t *testing.T, url, dir string) *childProc {
	t.Helper()
	cmd := kittest.Command("projector", "CAIRN_NATS="+url, "CAIRN_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill() // it may have exited already
		_ = cmd.Wait()         // "signal: killed", or its exit
		t.Fatalf("child: %v", err)
	}
	return &childProc{cmd: cmd, addr: strings.TrimSpace(strings.TrimPrefix(line, "addr "))}
}

func (c *childProc) readiness() (Readiness, bool) {
	resp, err := http.Get("http://" + c.addr + "/readyz")
	if err != nil {
		return Readiness{}, false
	}
	defer resp.Body.Close()
	var r Readiness
	return r, json.NewDecoder(resp.Body).Decode(&r) == nil && resp.StatusCode == 200
}

// kill -9 a projector process while entries stream in, twice; after a
// restart it catches up and its database equals a fresh rebuild.
func TestKillNineUnderLoad(t *testing.T) {
	srv, js := sessionsStream(t)
	log := synth.Log(31, 50, 8000)
	dir := t.TempDir()

	// The publisher may not call t.Fatal: it reports through pubErr.
	var pubErr error
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		for i := 0; i < len(log); i += 500 {
			for _, m := range log[i:min(i+500, len(log))] {
				if _, err := js.PublishAsync(m.Subject, m.Data); err != nil {
					pubErr = err
					return
				}
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(time.Minute):
				pubErr = fmt.Errorf("publishing did not complete")
				return
			}
		}
	}()

	c := startChild(t, srv.ClientURL(), dir)
	for _, at := range []uint64{1000, 3500} {
		waitFor(t, fmt.Sprintf("applied past %d", at), func() bool {
			r, ok := c.readiness()
			return ok && r.Applied > at
		})
		if err := c.cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		_ = c.cmd.Wait() // "signal: killed", as sent
		t.Logf("killed after sequence %d", at)
		c = startChild(t, srv.ClientURL(), dir)
	}
	<-pubDone
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	last := uint64(len(log))
	waitFor(t, "the restarted projector to catch up", func() bool {
		r, ok := c.readiness()
		return ok && r.Applied == last && r.LagEntries == 0
	})
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child after SIGTERM: %v", err)
	}
	live, err := Dump(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rb := rebuildDigest(t, js, 0); rb != live {
		t.Fatalf("after kill -9 and restart: %+v, a fresh rebuild gives %+v", live, rb)
	}
	if live.Applied != uint64(len(log)) {
		t.Fatalf("applied %d, the log has %d", live.Applied, len(log))
	}
}
