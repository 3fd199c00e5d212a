// Package resources holds pi's resource formats as Cairn stores and runs
// them: skills (a SKILL.md: YAML front matter with name and description,
// then the body), prompt templates (markdown with $1, $@, $ARGUMENTS and
// ${@:N:L}), the expansion of both into a user message, and the rendering
// of the available skills into the system prompt. The rules are pi's
// (packages/coding-agent: utils/frontmatter.ts, core/skills.ts,
// core/prompt-templates.ts, core/system-prompt.ts), so a pi user's files
// work unchanged; the golden cases in testdata/ are pi's own test cases.
//
// # Errors
//
// Where pi loads a broken skill with a warning or skips it, Cairn refuses
// it when it is stored: every refusal is a [*Error] naming the resource,
// the line (when there is one) and the reason. Expansion never fails:
// missing template arguments expand to "", as in pi.
//
// # Storage
//
// [Store] keeps each tenant's resources in one NATS KV bucket, one key per
// resource (<tenant>.<skill|template>.<name>); the key's revision is the
// version a run's entries record, and the bucket keeps the last 16
// versions of each. A put is refused unless the text parses; a tenant's
// calls reach only that tenant's keys.
//
// [Cache] is a copy of the whole bucket kept by one KV watch, for what
// runs per turn: [Store.WatchCache] returns once it holds what was stored
// when it started; afterwards it lags a put by the watch's delivery, and
// [Cache.Sync] waits until it has seen a version.
//
// # Concurrency
//
// The parsers, expansion and rendering are pure (no I/O); they and [Store]
// and [Cache] are safe for concurrent use. A put is last-writer-wins.
package resources
