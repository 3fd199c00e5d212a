//go:build compose

package composetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/invariants"
	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

// TestComposeChaos drives CAIRN_CHAOS_SESSIONS sessions (default 40; `make
// chaos` runs 1,000) through the compose cluster while a scheduler injects
// faults for at most CAIRN_CHAOS_FAULTS_FOR (default 2m): docker kill of
// each service kind and of a NATS node (started again), docker pause,
// network disconnect of a NATS node and of an orchestrator (reconnected),
// and a restart of the NATS node leading the session stream. Then every
// session's log is checked (internal/invariants), every chain verified,
// the projection compared with an online rebuild, and one FIGURES line
// printed (DESIGN §15).
//
// The gateway is published on an ephemeral host port, which Docker changes
// when kill-gateway starts the container again: the client dials through
// gatewayAddr, which resolves the port again when a dial fails.
func TestComposeChaos(t *testing.T) {
	n := envInt(t, "CAIRN_CHAOS_SESSIONS", 40)
	faultsFor := envDur(t, "CAIRN_CHAOS_FAULTS_FOR", 2*time.Minute)
	cl, c, ctx := up(t, 30*time.Minute)

	type run struct {
		sid   string
		acked []string
	}
	runs := make([]*run, n)
	var ackedTotal, refusedUnavailable atomic.Int64
	// send retries one command with the same id until the gateway
	// acknowledges it: a retry of a stored command is a duplicate, not a
	// second command.
	send := func(sid string, cmd client.Command) error {
		var last error
		for attempt := 0; ctx.Err() == nil; attempt++ {
			_, err := cl.Send(ctx, sid, cmd, client.WaitApplied())
			if err == nil || errors.Is(err, client.ErrTimeout) {
				return nil // stored; applied later
			}
			if errors.Is(err, client.ErrInvalid) || errors.Is(err, client.ErrRejected) {
				return err
			}
			last = err
			pause(ctx, time.Duration(min(attempt+1, 8))*250*time.Millisecond)
		}
		return fmt.Errorf("%s: not acknowledged: %v", sid, last)
	}
	// create creates the session, again under a new command id while the
	// orchestrator refuses it as unavailable (it could not read the tool
	// registry during a NATS election): a refusal is the command's
	// recorded outcome, not a loss, and the client's answer is a new
	// command.
	create := func(r *run) error {
		for ctx.Err() == nil {
			cid := events.NewID()
			for attempt := 0; ; attempt++ {
				_, err := cl.CreateSession(ctx, client.CreateSession{ID: r.sid, CommandID: cid}, client.WaitApplied())
				if err == nil || errors.Is(err, client.ErrTimeout) || errors.Is(err, client.ErrRejected) {
					break // stored: its outcome decides
				}
				if errors.Is(err, client.ErrInvalid) || ctx.Err() != nil {
					return fmt.Errorf("create %s: %w", r.sid, err)
				}
				pause(ctx, time.Duration(min(attempt+1, 8))*250*time.Millisecond)
			}
			st, err := outcome(ctx, cl, r.sid, cid, 3*time.Minute)
			if err != nil {
				return fmt.Errorf("create %s (command %s): %w", r.sid, cid, err)
			}
			if st.State == client.StateRejected {
				if st.Code != "unavailable" {
					return fmt.Errorf("create %s refused: %s: %s", r.sid, st.Code, st.Reason)
				}
				refusedUnavailable.Add(1)
				continue
			}
			r.acked = append(r.acked, cid)
			ackedTotal.Add(1)
			return nil
		}
		return ctx.Err()
	}
	drive := func(r *run) error {
		if err := create(r); err != nil {
			return err
		}
		for i, text := range []string{"please list files", "write a note", "compact"} {
			cmd := client.Prompt(text)
			if i == 2 {
				cmd = client.Compact("")
			}
			cmd.ID = events.NewID()
			// Wait for the last turn to settle: a prompt to a busy session is refused.
			waitQuiet(ctx, cl, r.sid, r.acked[len(r.acked)-1])
			err := send(r.sid, cmd)
			if errors.Is(err, client.ErrRejected) {
				continue // refused (busy, nothing to compact): recorded, not acknowledged
			}
			if err != nil {
				return err
			}
			r.acked = append(r.acked, cmd.ID)
			ackedTotal.Add(1)
		}
		return nil
	}

	// The faults, while the sessions run.
	faults := newFaults(t, c)
	fctx, fstop := context.WithTimeout(ctx, faultsFor)
	defer fstop()
	var fwg sync.WaitGroup
	fwg.Add(1)
	go func() { defer fwg.Done(); faults.run(fctx, cl) }()

	work := make(chan *run)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	// Eight sessions at a time, more for a long run (40 for 1,000), so that
	// the sessions, not the drivers, meet the faults.
	for range max(8, n/25) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				if err := drive(r); err != nil {
					errs <- err
				}
			}
		}()
	}
	// Sessions start spread over the fault window, so faults meet load.
	spread := faultsFor / time.Duration(n)
	for i := range runs {
		runs[i] = &run{sid: fmt.Sprintf("chaos-%04d", i)}
		work <- runs[i]
		pause(ctx, spread)
	}
	close(work)
	wg.Wait()
	fstop()
	fwg.Wait()
	close(errs)
	for err := range errs {
		c.errorf("%v", err)
	}
	faults.heal(ctx)

	// Every session settles; then the invariants, from the log.
	var lost, twice, without, chainsOK, stuck int
	for _, r := range runs {
		err := waitSettledBy(ctx, cl, r.sid, r.acked, 3*time.Minute)
		recs := records(t, ctx, cl, r.sid)
		if err != nil {
			stuck++
			c.errorf("%s stuck: %v\nits log: %s\n%s", r.sid, err, describeLog(recs), c.linesOf(ctx, r.sid, 80))
		}
		st, problems := invariants.Check(r.sid, recs, r.acked)
		lost += st.Lost
		twice += st.Twice
		without += st.WithoutOneResult
		for _, p := range problems {
			c.errorf("%v", p)
		}
		if v, err := cl.VerifySession(ctx, r.sid); err == nil && v.OK() {
			chainsOK++
		} else {
			c.errorf("%s: chain: %v %v", r.sid, err, v.Problems)
		}
	}
	projection := compareRebuild(ctx, c, cl)
	// The orchestrators log JSON: each lease given up on its deadline is a
	// "lease fenced" line, one given up after the key could have expired
	// (a window in which another may have held it) has "overlap":true.
	olog := c.logs(ctx, "orchestrator")
	fenced := strings.Count(olog, `"msg":"lease fenced: renewal overdue"`)
	overlaps := strings.Count(olog, `"overlap":true`)
	fmt.Printf("FIGURES sessions=%d commands=%d lost=%d twice=%d without-one-result=%d projection=%s chains=%d/%d stuck=%d leases-fenced=%d overlaps=%d creates-refused-unavailable=%d %s\n",
		n, ackedTotal.Load(), lost, twice, without, projection, chainsOK, n, stuck, fenced, overlaps, refusedUnavailable.Load(), faults.figures())
	if projection != "equal" {
		c.errorf("the projection differs from a rebuild")
	}
}

// up starts the compose project and returns a client of its gateway; the
// project is torn down when the test ends.
func up(t *testing.T, within time.Duration) (*client.Client, *compose, context.Context) {
	t.Helper()
	c, key := project(t)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	t.Cleanup(cancel)
	if out, err := c.run(ctx, "up", "-d", "--no-build"); err != nil {
		t.Fatalf("up: %v\n%s", err, out)
	}
	g := &gatewayAddr{c: c}
	addr, err := g.resolve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g.addr = addr
	hc := &http.Client{Transport: &http.Transport{DialContext: g.dial, MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}}
	cl, err := client.New("http://"+addr, client.WithToken(key), client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the gateway to answer", func() error { return cl.Health(ctx) })
	return cl, c, ctx
}

// gatewayAddr is the gateway's published host address, followed across
// restarts: Docker gives a container started again (kill-gateway, then
// start) a new ephemeral host port, so a dial that fails resolves the
// address again with `compose port` and, if it moved, dials the new one.
// One resolution runs at a time; dials that failed meanwhile use its answer.
type gatewayAddr struct {
	c         *compose
	resolving sync.Mutex // one `compose port` at a time
	mu        sync.Mutex
	addr      string
}

func (g *gatewayAddr) current() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.addr
}

// resolve asks compose for the host address of the gateway's port 8080.
func (g *gatewayAddr) resolve(ctx context.Context) (string, error) {
	out, err := g.c.run(ctx, "port", "gateway", "8080")
	if err != nil {
		return "", err
	}
	addr := strings.TrimSpace(out)
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "0" {
		return "", fmt.Errorf("the gateway is not published (compose port: %q)", addr)
	}
	return addr, nil
}

// dial is the client transport's DialContext: the address asked for is
// the one the client was made with, and is ignored.
func (g *gatewayAddr) dial(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	addr := g.current()
	conn, err := d.DialContext(ctx, network, addr)
	if err == nil {
		return conn, nil
	}
	g.resolving.Lock()
	defer g.resolving.Unlock()
	if now := g.current(); now != addr {
		return d.DialContext(ctx, network, now) // another dial resolved it meanwhile
	}
	fresh, rerr := g.resolve(ctx)
	if rerr != nil || fresh == addr {
		return nil, err // still down, or the same port: the caller retries
	}
	g.c.t.Logf("the gateway moved from %s to %s", addr, fresh)
	g.mu.Lock()
	g.addr = fresh
	g.mu.Unlock()
	return d.DialContext(ctx, network, fresh)
}

// outcome polls the command's status until it is no longer pending, for at
// most within.
func outcome(ctx context.Context, cl *client.Client, sid, cid string, within time.Duration) (client.CommandStatus, error) {
	deadline := time.Now().Add(within)
	var st client.CommandStatus
	var err error
	for ctx.Err() == nil && time.Now().Before(deadline) {
		st, err = cl.CommandStatus(ctx, sid, cid)
		if err == nil && st.State != client.StatePending {
			return st, nil
		}
		pause(ctx, 250*time.Millisecond)
	}
	return st, fmt.Errorf("no outcome within %s (state %q, %v)", within, st.State, err)
}

// waitQuiet waits (bounded) until command cid is applied and the session idle.
func waitQuiet(ctx context.Context, cl *client.Client, sid, cid string) {
	deadline := time.Now().Add(2 * time.Minute)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if settled(ctx, cl, sid, cid) == nil {
			return
		}
		pause(ctx, 200*time.Millisecond)
	}
}

func waitSettledBy(ctx context.Context, cl *client.Client, sid string, acked []string, within time.Duration) error {
	deadline := time.Now().Add(within)
	var err error
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if err = settled(ctx, cl, sid, acked[len(acked)-1]); err == nil {
			return nil
		}
		pause(ctx, 250*time.Millisecond)
	}
	return err
}

// compareRebuild compares the live read models' digest with one after an
// online rebuild from sequence 1, at the same applied sequence.
func compareRebuild(ctx context.Context, c *compose, cl *client.Client) string {
	c.t.Helper()
	before, err := cl.Digest(ctx)
	if err != nil {
		c.errorf("digest: %v", err)
		return "differs"
	}
	if _, err := cl.StartRebuild(ctx); err != nil {
		c.errorf("rebuild: %v", err)
		return "differs"
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st, err := cl.RebuildStatus(ctx)
		if err == nil && !st.Running() {
			if st.State != client.RebuildDone {
				c.errorf("rebuild %s: %s", st.State, st.Error)
				return "differs"
			}
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			c.errorf("rebuild did not end: %+v %v", st, err)
			return "differs"
		}
		pause(ctx, 250*time.Millisecond)
	}
	after, err := cl.Digest(ctx)
	if err != nil || after.Applied != before.Applied || after.SHA256 != before.SHA256 {
		c.errorf("live %+v, rebuilt %+v (%v)", before, after, err)
		return "differs"
	}
	return "equal"
}

// faults injects and records faults on the compose project's containers.
type faults struct {
	t       *testing.T
	c       *compose
	mu      sync.Mutex
	count   map[string]int
	longest map[string]time.Duration // longest unavailability seen by a probe during a fault of that kind
}

func newFaults(t *testing.T, c *compose) *faults {
	return &faults{t: t, c: c, count: map[string]int{}, longest: map[string]time.Duration{}}
}

// kinds are the faults, injected in turn; kills alternate with pauses,
// partitions and the leader's restart, so that a short run (make
// chaos-short: about six faults) meets each verb.
var kinds = []string{"kill-orchestrator", "pause-nats", "kill-nats", "partition-orchestrator", "kill-gateway", "restart-session-leader",
	"kill-toolrunner", "pause-orchestrator", "kill-compactor", "partition-nats", "kill-projector"}

func (f *faults) run(ctx context.Context, cl *client.Client) {
	for i := 0; ctx.Err() == nil; i++ {
		kind := kinds[i%len(kinds)]
		if err := f.inject(ctx, kind); err != nil {
			f.t.Logf("fault %s: %v", kind, err)
			continue
		}
		// Unavailability: how long until a command is acknowledged again.
		down := probe(ctx, cl, time.Minute)
		f.mu.Lock()
		f.count[kind]++
		f.longest[kind] = max(f.longest[kind], down)
		f.mu.Unlock()
		pause(ctx, 2*time.Second)
	}
}

// probe times how long until a fresh session's create is acknowledged.
func probe(ctx context.Context, cl *client.Client, within time.Duration) time.Duration {
	start := time.Now()
	sid := "probe-" + events.NewID()
	cid := events.NewID()
	for time.Since(start) < within && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := cl.CreateSession(pctx, client.CreateSession{ID: sid, CommandID: cid})
		cancel()
		if err == nil {
			return time.Since(start)
		}
		pause(ctx, 100*time.Millisecond)
	}
	return time.Since(start)
}

func (f *faults) inject(ctx context.Context, kind string) error {
	verb, what, _ := strings.Cut(kind, "-")
	// A fault that began is undone even when the fault window ends during
	// it: unpause and reconnect outlive ctx (heal is the backstop).
	undo := context.WithoutCancel(ctx)
	switch verb {
	case "kill":
		ctr, err := f.c.pick(ctx, what)
		if err != nil {
			return err
		}
		if _, err := docker(ctx, "kill", ctr); err != nil {
			return err
		}
		_, err = docker(undo, "start", ctr)
		return err
	case "pause":
		ctr, err := f.c.pick(ctx, what)
		if err != nil {
			return err
		}
		if _, err := docker(ctx, "pause", ctr); err != nil {
			return err
		}
		pause(ctx, 8*time.Second) // longer than the lease TTL
		_, err = docker(undo, "unpause", ctr)
		return err
	case "partition":
		ctr, err := f.c.pick(ctx, what)
		if err != nil {
			return err
		}
		net := f.c.project + "_cairn"
		if _, err := docker(ctx, "network", "disconnect", net, ctr); err != nil {
			return err
		}
		pause(ctx, 8*time.Second)
		return f.c.reconnect(undo, ctr)
	case "restart":
		ctr, err := f.c.sessionLeader(ctx)
		if err != nil {
			return err
		}
		_, err = docker(ctx, "restart", "-t", "2", ctr)
		return err
	}
	return fmt.Errorf("unknown fault %s", kind)
}

// heal undoes what a cancelled fault may have left: paused or cut off containers.
func (f *faults) heal(ctx context.Context) {
	out, _ := docker(ctx, "ps", "-aq", "--filter", "label=com.docker.compose.project="+f.c.project)
	for _, id := range strings.Fields(out) {
		_, _ = docker(ctx, "unpause", id)
		_ = f.c.reconnect(ctx, id) // refused when it is connected
	}
}

// reconnect attaches ctr to the project's network again under its
// service's name. `docker network connect` alone gives a container only its
// id as an alias: the others, which dial nats1..3 by service name, could no
// longer resolve a node after its partition, and once every node had been
// partitioned a restarted service could not connect at all.
func (c *compose) reconnect(ctx context.Context, ctr string) error {
	svc, err := docker(ctx, "inspect", "-f", `{{index .Config.Labels "com.docker.compose.service"}}`, ctr)
	if err != nil {
		return err
	}
	_, err = docker(ctx, "network", "connect", "--alias", strings.TrimSpace(svc), c.project+"_cairn", ctr)
	return err
}

func (f *faults) figures() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ks []string
	for k := range f.count {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "faults.%s=%d unavailable.%s=%.1fs ", k, f.count[k], k, f.longest[k].Seconds())
	}
	return strings.TrimSpace(b.String())
}

// pick returns a random running container of the service kind.
func (c *compose) pick(ctx context.Context, kind string) (string, error) {
	svc := kind
	if kind == "nats" {
		svc = []string{"nats1", "nats2", "nats3"}[rand.IntN(3)]
	}
	// docker ps by compose's labels: docker-compose ps is too slow here.
	out, err := docker(ctx, "ps", "-q", "--filter", "label=com.docker.compose.project="+c.project,
		"--filter", "label=com.docker.compose.service="+svc)
	if err != nil {
		return "", err
	}
	ids := strings.Fields(out)
	if len(ids) == 0 {
		return "", fmt.Errorf("no container of %s", svc)
	}
	return ids[rand.IntN(len(ids))], nil
}

// sessionLeader returns the container of the NATS node leading the session
// stream, as the nodes' monitoring endpoint (/jsz) tells from inside the
// network: the node whose name the leader field gives.
func (c *compose) sessionLeader(ctx context.Context) (string, error) {
	out, err := c.run(ctx, "logs", "--no-color", "nats1", "nats2", "nats3")
	if err != nil {
		return "", err
	}
	// "JetStream cluster new stream leader for 'USERS > CAIRN_SESSIONS'" is
	// logged by the node that became leader; the last such line wins.
	leader := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "new stream leader") && strings.Contains(line, "CAIRN_SESSIONS'") {
			svc, _, _ := strings.Cut(line, "|")
			leader = strings.TrimSpace(svc)
		}
	}
	if leader == "" {
		return c.pick(ctx, "nats")
	}
	// The log prefix is the container's name, without the project in
	// docker-compose 1.29 (natsN_1).
	if !strings.HasPrefix(leader, c.project+"_") {
		leader = c.project + "_" + leader
	}
	return leader, nil
}

// linesOf returns the last n lines of every service's log that name s
// (a session id): what a failed run leaves to find the cause with, since
// the project is torn down.
func (c *compose) linesOf(ctx context.Context, s string, n int) string {
	out, _ := c.run(ctx, "logs", "--no-color")
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			lines = append(lines, l)
		}
	}
	lines = lines[len(lines)-min(len(lines), n):]
	return strings.Join(lines, "\n")
}

// logs returns the logs of a service's containers, from every start of
// each (a container started again keeps its log).
func (c *compose) logs(ctx context.Context, svc string) string {
	out, err := c.run(ctx, "logs", "--no-color", svc)
	if err != nil {
		c.t.Errorf("logs of %s: %v", svc, err)
	}
	return out
}

func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// pause waits d or until ctx ends: fault durations and retry pacing, not
// synchronisation.
func pause(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

func envInt(t *testing.T, k string, def int) int {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: a positive integer expected", k, v)
	}
	return n
}

func envDur(t *testing.T, k string, def time.Duration) time.Duration {
	v := os.Getenv(k)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: a positive duration expected", k, v)
	}
	return d
}

// describeLog is a stuck session's log in one line: each entry's type,
// with a message's role, stop reason and tool calls, and the command an
// entry names.
func describeLog(recs []session.Record) string {
	var b strings.Builder
	for i, r := range recs {
		if i > 0 {
			b.WriteString(" | ")
		}
		e := r.Entry
		b.WriteString(e.Type)
		if m := e.Message; m != nil {
			fmt.Fprintf(&b, ":%s", m.Role)
			if m.StopReason != "" {
				fmt.Fprintf(&b, "/%s", m.StopReason)
			}
			for _, tc := range m.ToolCalls() {
				fmt.Fprintf(&b, " call=%s", tc.ID)
			}
			if m.ToolCallID != "" {
				fmt.Fprintf(&b, " result=%s", m.ToolCallID)
			}
		}
		if e.ToolCallID != "" {
			fmt.Fprintf(&b, " call=%s", e.ToolCallID)
		}
		if e.CommandID != "" {
			fmt.Fprintf(&b, " cmd=%s", e.CommandID)
		}
		if e.Retry != nil {
			fmt.Fprintf(&b, " retry=%s#%d", e.Retry.Code, e.Retry.Attempt)
		}
	}
	return b.String()
}
