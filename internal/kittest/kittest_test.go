package kittest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
)

func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"echo": func() int { fmt.Print(os.Getenv("KITTEST_WORD")); return 3 }})
}

// recorder is a testing.TB that records failures instead of ending the test.
type recorder struct {
	testing.TB
	failed   []string
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

func TestEventuallyWaitsForCondition(t *testing.T) {
	var n atomic.Int32
	kittest.Eventually(t, 10*time.Second, "third check", func() bool { return n.Add(1) >= 3 })
	if got := n.Load(); got != 3 {
		t.Fatalf("checked %d times, want 3", got)
	}
	n.Store(0)
	kittest.Eventually(t, 10*time.Second, "third check", func() error {
		if n.Add(1) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
}

func TestEventuallyFailsWithLastError(t *testing.T) {
	r := &recorder{TB: t}
	kittest.Eventually(r, 50*time.Millisecond, "never", func() error { return errors.New("still 7") })
	if len(r.failed) != 1 || !strings.Contains(r.failed[0], "never: not within 50ms") || !strings.Contains(r.failed[0], "still 7") {
		t.Fatalf("failures = %q", r.failed)
	}
}

func TestRunChecksTheServiceError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		fail bool
	}{{"nil", nil, false}, {"canceled", context.Canceled, false}, {"wrapped canceled", fmt.Errorf("x: %w", context.Canceled), false}, {"other", errors.New("boom"), true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			stop := kittest.Run(r, context.Background(), "svc", func(ctx context.Context) error { <-ctx.Done(); return tc.err })
			stop()
			stop() // idempotent
			for _, c := range r.cleanups {
				c()
			}
			if got := len(r.failed) > 0; got != tc.fail {
				t.Fatalf("failed = %v (%q), want %v", got, r.failed, tc.fail)
			}
		})
	}
}

func TestCommandRunsTheChild(t *testing.T) {
	cmd := kittest.Command("echo", "KITTEST_WORD=cairn")
	out, err := cmd.Output()
	var ee interface{ ExitCode() int }
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child exit = %v, want code 3", err)
	}
	if string(out) != "cairn" {
		t.Fatalf("child printed %q, want %q", out, "cairn")
	}
}
