package session_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cairn-agents/cairn/internal/kittest"
)

// TestMain lets the test binary act as a writer process for
// TestTwoProcessesAppendToOneSession when re-executed with
// CAIRN_SESSION_WRITER set.
//
// nats-server v2.15 stops a file store's state flusher and its shared
// access-time ticker on their own goroutines after Shutdown returns; under
// a loaded CI machine the leak check once caught them still running (a
// fresh-clone run of 2026-12-01), so they are allowed here.
func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"writer": writerProcess},
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*fileStore).flushStreamStateLoop"),
		goleak.IgnoreAnyFunction("github.com/nats-io/nats-server/v2/server/ats.Register.func1"))
}
