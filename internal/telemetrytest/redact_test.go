package telemetrytest

import (
	"strings"
	"testing"

	"github.com/cairn-agents/cairn/pkg/telemetry"
)

// exported gathers every span attribute and status message, every metric
// exposition and every log line of a run, as one text to search.
func (o outcome) exported() (spans, metrics, logs string) {
	var b strings.Builder
	for _, s := range o.spans {
		b.WriteString(s.Name + " " + s.Message + "\n")
		for k, v := range s.Attrs {
			b.WriteString(k + "=" + v + "\n")
		}
	}
	var m strings.Builder
	for _, text := range o.metrics {
		m.WriteString(text)
	}
	return b.String(), m.String(), o.logs
}

// TestNoContentNoKeyByDefault: a prompt with a secret-looking string, a
// provider key in both processes' environment, content export off: neither
// the prompt, the completion, the tool output nor the key shows in any span
// attribute, metric label or log line.
func TestNoContentNoKeyByDefault(t *testing.T) {
	out := runPrompt(t, false)
	spans, metrics, logs := out.exported()
	if !strings.Contains(spans, telemetry.SpanToolRun) || !strings.Contains(metrics, "cairn_llm_requests_total") || !strings.Contains(logs, "stream done") {
		t.Fatalf("the run exported too little to judge:\nspans:\n%s\nlogs:\n%s", spans, logs)
	}
	for what, text := range map[string]string{"span": spans, "metric": metrics, "log": logs} {
		for _, secret := range []string{apiKey, adminKey.Reveal(), promptSecret, toolContent, completion} {
			if strings.Contains(text, secret) {
				t.Errorf("%q is in a %s:\n%s", secret, what, linesWith(text, secret))
			}
		}
	}
}

// TestContentExportShowsContentButNoKey: with content export on, spans
// carry the prompt, the completion and the tool output, and still no key.
func TestContentExportShowsContentButNoKey(t *testing.T) {
	out := runPrompt(t, true)
	spans, metrics, logs := out.exported()
	for _, want := range []string{promptSecret, completion, toolContent} {
		if !strings.Contains(spans, want) {
			t.Errorf("content export is on but %q is in no span:\n%s", want, spans)
		}
	}
	for what, text := range map[string]string{"span": spans, "metric": metrics, "log": logs} {
		if strings.Contains(text, apiKey) {
			t.Errorf("the API key is in a %s:\n%s", what, linesWith(text, apiKey))
		}
	}
	// Content belongs to spans only: never to metric labels.
	for _, secret := range []string{promptSecret, completion, toolContent} {
		if strings.Contains(metrics, secret) {
			t.Errorf("%q is in a metric label", secret)
		}
	}
}

// linesWith returns the lines of text that contain s.
func linesWith(text, s string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
