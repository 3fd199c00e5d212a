package telemetry

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
)

// maxContent bounds one content attribute, so a huge tool output does not
// make a span too large to export.
const maxContent = 8 << 10

var contentOn atomic.Bool

// SetContent turns content export on or off for the whole process. [Setup]
// calls it with [Config.TraceContent]; tests call it directly.
func SetContent(on bool) { contentOn.Store(on) }

// ContentEnabled reports whether spans may carry prompt, completion and
// tool content.
func ContentEnabled() bool { return contentOn.Load() }

// ContentAttr returns the attribute key=text, cut to 8 KiB, and true when
// content export is on; otherwise an empty attribute and false.
func ContentAttr(key, text string) (attribute.KeyValue, bool) {
	if !contentOn.Load() {
		return attribute.KeyValue{}, false
	}
	if len(text) > maxContent {
		text = text[:maxContent] + "…[truncated]"
	}
	return attribute.String(key, text), true
}
