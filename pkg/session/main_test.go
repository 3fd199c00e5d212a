package session_test

import (
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
)

// TestMain lets the test binary act as a writer process for
// TestTwoProcessesAppendToOneSession when re-executed with
// CAIRN_SESSION_WRITER set.
func TestMain(m *testing.M) {
	kittest.Main(m, kittest.Children{"writer": writerProcess})
}
