package session_test

import (
	"os"
	"testing"
)

// TestMain lets the test binary act as a writer process for
// TestTwoProcessesAppendToOneSession when re-executed with
// CAIRN_SESSION_WRITER set.
func TestMain(m *testing.M) {
	if os.Getenv(writerEnv) != "" {
		os.Exit(writerProcess())
	}
	os.Exit(m.Run())
}
