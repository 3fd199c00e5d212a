package kittest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Tick is how often [Eventually] checks its condition.
const Tick = 10 * time.Millisecond

// Cond is a condition [Eventually] waits for: a func() bool that holds when
// it returns true, or a func() error that holds when it returns nil (its last
// error says why it did not).
type Cond interface{ func() bool | func() error }

// Eventually checks cond at once and then every [Tick] until it holds,
// failing t with what (and cond's last error) if it does not within the
// given time. It never sleeps: it waits on a ticker and a timer.
func Eventually[C Cond](t testing.TB, within time.Duration, what string, cond C) {
	t.Helper()
	check := func() error {
		switch c := any(cond).(type) {
		case func() bool:
			if !c() {
				return errors.New("condition false")
			}
			return nil
		case func() error:
			return c()
		}
		panic("unreachable")
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(Tick)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-deadline.C:
			t.Fatalf("%s: not within %v (last: %v)", what, within, err)
			return
		case <-tick.C:
		}
	}
}

// Run starts run(ctx') in a goroutine, where ctx' is a child of ctx, and
// returns stop. stop cancels ctx', waits for run to return and fails t
// (with name) unless it returned nil or context.Canceled; it runs at most
// once, and t's cleanup calls it if the test did not.
func Run(t testing.TB, ctx context.Context, name string, run func(context.Context) error) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("%s: Run: %v", name, err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// childEnv names the child role a re-executed test binary plays.
const childEnv = "CAIRN_TEST_CHILD"

// Children maps a child role to the function that plays it; the function's
// result is the process's exit code.
type Children map[string]func() int

// Main is the body of a package's TestMain. Started by [Command] as one of
// children, it runs that child and exits with its code. Otherwise it runs
// the tests and exits non-zero if they failed or if a goroutine outlived
// them. ignore lists goroutines a package knowingly leaves running (see
// goleak.IgnoreTopFunction), besides the library leaks Main always allows.
func Main(m *testing.M, children Children, ignore ...goleak.Option) {
	if role := os.Getenv(childEnv); role != "" {
		child, ok := children[role]
		if !ok {
			fmt.Fprintf(os.Stderr, "kittest: no child role %q\n", role)
			os.Exit(2)
		}
		os.Exit(child())
	}
	goleak.VerifyTestMain(m, append(knownLeaks(), ignore...)...)
}

// knownLeaks are goroutines libraries leave behind through no fault of the
// code under test.
func knownLeaks() []goleak.Option {
	return []goleak.Option{
		// nats.go v1.55: JetStream.CleanupPublisher sets the status channel
		// to nil before this goroutine reads it, which then blocks on a nil
		// channel for good.
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
	}
}

// Command returns a command that re-executes the running test binary as the
// child role (which the package's [Main] must list), running no tests, with
// the current environment plus env ("KEY=value" entries).
func Command(role string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	return cmd
}
