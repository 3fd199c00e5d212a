package events_test

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/events"
)

// BenchmarkPromptDigest is the digest of a 73 KB system prompt (the size
// resources.Build gives 50 skills), paid once per changed prompt when it
// is recorded; an unchanged one costs a string compare.
func BenchmarkPromptDigest(b *testing.B) {
	p := strings.Repeat("<skill><name>x</name><description>does things</description></skill>\n", 1100)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		_ = events.PromptDigest(p)
	}
}
