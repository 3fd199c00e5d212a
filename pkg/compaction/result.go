package compaction

import (
	"encoding/json"
	"strings"
)

// Job returns the summary job of the preparation.
func (p *Preparation) Job(instructions string, s Settings, modelMaxOutput int64) Job {
	return Job{Transcript: Serialize(p.Summarize), TurnPrefix: Serialize(p.TurnPrefix),
		PreviousSummary: p.PreviousSummary, Instructions: instructions, MaxTokens: s.MaxSummaryTokens(modelMaxOutput)}
}

// Result is what a compaction entry records.
type Result struct {
	Summary          string
	FirstKeptEntryID string
	TokensBefore     int64
	Details          json.RawMessage // a [Details]
}

// Result combines the preparation with the model's summary: the summary
// followed by the files read and modified so far, the details with the
// file operations and the usage of the summary calls.
func (p *Preparation) Result(s Summary) Result {
	var sb strings.Builder
	sb.WriteString(s.Text)
	files := func(tag string, paths []string) {
		if len(paths) == 0 {
			return
		}
		sb.WriteString("\n\n<" + tag + ">\n" + strings.Join(paths, "\n") + "\n</" + tag + ">")
	}
	files("read-files", p.Files.ReadOnly())
	files("modified-files", p.Files.Modified())
	u := s.Usage
	d, _ := json.Marshal(p.Files.details(&u)) // plain strings and numbers: cannot fail
	return Result{Summary: sb.String(), FirstKeptEntryID: p.FirstKeptEntryID, TokensBefore: p.TokensBefore, Details: d}
}
