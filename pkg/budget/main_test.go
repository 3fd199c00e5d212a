package budget_test

import (
	"testing"

	"github.com/cairn-agents/cairn/internal/kittest"
)

func TestMain(m *testing.M) { kittest.Main(m, nil) }
