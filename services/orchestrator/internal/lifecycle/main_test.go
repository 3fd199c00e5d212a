package lifecycle

import (
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
)

// TestMain fails the package's tests if a goroutine outlives them.
func TestMain(m *testing.M) { kittest.Main(m, nil) }
