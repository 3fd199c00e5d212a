package compaction

import (
	"encoding/json"
	"slices"

	"github.com/cairn-agents/cairn/pkg/events"
)

// FileOps are the paths the agent read, wrote and edited in the history a
// compaction summarised, accumulated across compactions.
type FileOps struct {
	Read, Written, Edited map[string]bool
}

func newFileOps() FileOps {
	return FileOps{Read: map[string]bool{}, Written: map[string]bool{}, Edited: map[string]bool{}}
}

// note records the file operations of the tool calls of m.
func (f FileOps) note(m *events.Message) {
	if m.Role != events.RoleAssistant {
		return
	}
	for _, c := range m.ToolCalls() {
		var args struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(c.Arguments, &args) != nil || args.Path == "" {
			continue
		}
		switch c.Name {
		case "read":
			f.Read[args.Path] = true
		case "write":
			f.Written[args.Path] = true
		case "edit":
			f.Edited[args.Path] = true
		}
	}
}

// Details is the JSON of a compaction entry's details. readFiles and
// modifiedFiles are pi's names (read but never modified; written or
// edited); writtenFiles and editedFiles keep the distinction.
type Details struct {
	ReadFiles     []string      `json:"readFiles"`
	ModifiedFiles []string      `json:"modifiedFiles"`
	WrittenFiles  []string      `json:"writtenFiles,omitempty"`
	EditedFiles   []string      `json:"editedFiles,omitempty"`
	SummaryUsage  *events.Usage `json:"summaryUsage,omitempty"`
}

// mergeDetails adds the file operations recorded in a previous
// compaction's details (pi's or Cairn's); details it cannot read add none.
func (f FileOps) mergeDetails(raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var d Details
	if json.Unmarshal(raw, &d) != nil {
		return
	}
	for _, p := range d.ReadFiles {
		f.Read[p] = true
	}
	for _, p := range d.WrittenFiles {
		f.Written[p] = true
	}
	for _, p := range d.EditedFiles {
		f.Edited[p] = true
	}
	for _, p := range d.ModifiedFiles {
		if !f.Written[p] && !f.Edited[p] {
			f.Edited[p] = true
		}
	}
}

func sortedKeys(m map[string]bool, skip func(string) bool) []string {
	out := []string{}
	for k := range m {
		if skip == nil || !skip(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Modified returns the written or edited paths, sorted.
func (f FileOps) Modified() []string {
	all := map[string]bool{}
	for k := range f.Written {
		all[k] = true
	}
	for k := range f.Edited {
		all[k] = true
	}
	return sortedKeys(all, nil)
}

// ReadOnly returns the paths read and never modified, sorted.
func (f FileOps) ReadOnly() []string {
	return sortedKeys(f.Read, func(p string) bool { return f.Written[p] || f.Edited[p] })
}

// details returns the details of a compaction with these file operations.
func (f FileOps) details(usage *events.Usage) Details {
	return Details{ReadFiles: f.ReadOnly(), ModifiedFiles: f.Modified(),
		WrittenFiles: sortedKeys(f.Written, nil), EditedFiles: sortedKeys(f.Edited, nil), SummaryUsage: usage}
}
