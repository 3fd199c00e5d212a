package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

func newLogCmd(e *env) *cobra.Command {
	var lf logFlags
	var asJSON bool
	c := &cobra.Command{
		Use:   "log ID",
		Short: "print a session's log, one entry a line",
		Long: `Print session ID's entries in log order: sequence, time, type, id, parent and
a short description, or with --json one {seq, digest, entry} a line. Through the
gateway the entries are read from the stream as stored (GET .../records), and
each digest is computed here from the stored bytes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := sessionArg(args[0]); err != nil {
				return err
			}
			recs, err := lf.records(cmd, args[0])
			if err != nil {
				return err
			}
			w := bufio.NewWriter(e.stdout)
			for _, r := range recs {
				if asJSON {
					line, err := json.Marshal(logLine{Seq: r.Seq, Digest: r.Digest, Entry: r.Entry})
					if err != nil {
						return err
					}
					w.Write(line)
					w.WriteByte('\n')
					continue
				}
				writeLogLine(w, r.Seq, &r.Entry)
			}
			return w.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON lines: {seq, digest, entry}")
	lf.add(c)
	return c
}

// records returns session sid's records: through the gateway as the stream
// stores them, or with --nats as the log loads them (large parts restored).
func (f *logFlags) records(cmd *cobra.Command, sid string) ([]client.Record, error) {
	direct, err := f.direct(cmd)
	if err != nil {
		return nil, err
	}
	if !direct {
		cl, err := clientFrom(cmd)
		if err != nil {
			return nil, err
		}
		return cl.Records(cmd.Context(), sid)
	}
	s, closeLog, err := f.load(cmd.Context(), sid)
	if err != nil {
		return nil, err
	}
	defer closeLog()
	return fromSession(s.Records()), nil
}

// fromSession converts the log's records to the SDK's.
func fromSession(recs []session.Record) []client.Record {
	out := make([]client.Record, len(recs))
	for i, r := range recs {
		out[i] = client.Record{Seq: r.Seq, Data: r.Data, Digest: r.Digest, Entry: r.Entry}
	}
	return out
}

// logLine is one line of `cairn log --json`.
type logLine struct {
	Seq    uint64       `json:"seq"`
	Digest string       `json:"digest"`
	Entry  events.Entry `json:"entry"`
}

// writeLogLine writes one record for people: sequence, time, type, id,
// parent and a short description.
func writeLogLine(w io.Writer, seq uint64, e *events.Entry) {
	parent := "-"
	if e.ParentID != nil {
		parent = *e.ParentID
	}
	fmt.Fprintf(w, "%6d  %s  %-18s %-16s <- %-16s %s\n", seq, e.Timestamp, e.Type, e.ID, parent, describe(e))
}

// describe says in a few words what an entry holds.
func describe(e *events.Entry) string {
	switch e.Type {
	case events.EntrySession:
		s := "model=" + e.Model
		if e.ParentSession != "" {
			s += " forked from " + e.ParentSession
		}
		return s
	case events.EntryMessage:
		if e.Message == nil {
			return ""
		}
		m := e.Message
		s := m.Role
		switch m.Role {
		case events.RoleToolResult:
			s += " " + m.ToolName
		case events.RoleAssistant:
			for _, c := range m.ToolCalls() {
				s += " call:" + c.Name
			}
		}
		if t := m.Content.Text(); t != "" {
			s += " " + quoteShort(t)
		}
		return s
	case events.EntryModelChange:
		return e.Provider + "/" + e.ModelID
	case events.EntryThinkingLevelChange:
		return e.ThinkingLevel
	case events.EntryActiveToolsChange:
		return strings.Join(e.ActiveToolNames, ",")
	case events.EntryCompaction:
		return "keeps from " + e.FirstKeptEntryID + " " + quoteShort(e.Summary)
	case events.EntryBranchSummary:
		return "from " + e.FromID + " " + quoteShort(e.Summary)
	case events.EntryLabel:
		return fmt.Sprintf("%s = %q", deref(e.TargetID), e.Label)
	case events.EntryLeaf:
		return "-> " + deref(e.TargetID)
	case events.EntryTurnInterrupted, events.EntryCommandRejected:
		return e.Reason
	case events.EntryCustom, events.EntryCustomMessage:
		return e.CustomType
	case events.EntrySessionInfo:
		return e.Name
	}
	return ""
}

func deref(p *string) string {
	if p == nil {
		return "(root)"
	}
	return *p
}

// quoteShort quotes the first line of s, cut to 60 characters.
func quoteShort(s string) string {
	s, _, cut := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 60 {
		s, cut = string(r[:60]), true
	}
	q := fmt.Sprintf("%q", s)
	if cut {
		q += "…"
	}
	return q
}
