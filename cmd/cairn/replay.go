package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/services/projector"
	"github.com/spf13/cobra"
)

func newReplayCmd(e *env) *cobra.Command {
	var lf logFlags
	c := &cobra.Command{
		Use:   "replay ID",
		Short: "print a session as it was at a point of its log",
		Long: `Read session ID's entries from the log (its subject on CAIRN_SESSIONS, no read
model involved) up to --until, reduce them with the projector's rules, and print
the session as it was: its summary and its tree, the active leaf marked with *.
--until is a stream sequence (the last entry applied) or an RFC 3339 time (the
last entry at or before it). --json prints summary, tree and entries as JSON.
Through the gateway the projector replays it (GET .../replay); with --nats this
process does.`,
		Args: cobra.ExactArgs(1),
	}
	until := c.Flags().String("until", "", "stream sequence or RFC 3339 time to stop at (default: the end)")
	asJSON := c.Flags().Bool("json", false, "print summary, tree and entries as JSON")
	lf.add(c)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		sid := args[0]
		if err := sessionArg(sid); err != nil {
			return err
		}
		at, err := parseUntil(*until)
		if err != nil {
			return err
		}
		direct, err := lf.direct(cmd)
		if err != nil {
			return err
		}
		var r client.Replayed
		if direct {
			if r, err = replayFromNATS(cmd, &lf, sid, at); err != nil {
				return err
			}
		} else {
			cl, err := clientFrom(cmd)
			if err != nil {
				return err
			}
			if r, err = cl.Replay(cmd.Context(), sid, at); err != nil {
				return err
			}
		}
		if *asJSON {
			data, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(e.stdout, "%s\n", data)
			return err
		}
		printReplay(e.stdout, r)
		return nil
	}
	return c
}

// replayFromNATS replays sid in this process and converts the answer to the
// SDK's form, through the JSON they share.
func replayFromNATS(cmd *cobra.Command, lf *logFlags, sid string, at client.ReplayPoint) (client.Replayed, error) {
	js, closeConn, err := lf.connect()
	if err != nil {
		return client.Replayed{}, err
	}
	defer closeConn()
	ref, err := parseCLISession(sid)
	if err != nil {
		return client.Replayed{}, err
	}
	r, err := projector.Replay(cmd.Context(), js, lf.prefix, ref, projector.ReplayPoint{Seq: at.Seq, Time: at.Time})
	if err != nil {
		return client.Replayed{}, err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return client.Replayed{}, err
	}
	var out client.Replayed
	err = json.Unmarshal(data, &out)
	return out, err
}

func parseUntil(s string) (client.ReplayPoint, error) {
	if s == "" {
		return client.ReplayPoint{}, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		if n == 0 {
			return client.ReplayPoint{}, usagef("--until: a stream sequence starts at 1, got 0")
		}
		return client.ReplayPoint{Seq: n}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return client.ReplayPoint{}, usagef("--until: want a stream sequence or an RFC 3339 time such as 2026-01-02T15:04:05Z, got %q", s)
	}
	return client.ReplayPoint{Time: t}, nil
}

func printReplay(w io.Writer, r client.Replayed) {
	s := r.Summary
	leaf := "(before the first entry)"
	if s.Leaf != nil {
		leaf = *s.Leaf
	}
	fmt.Fprintf(w, "session %s  status %s  leaf %s  model %s\n", s.ID, s.Status, leaf, s.Model)
	fmt.Fprintf(w, "entries %d  messages %d  tool calls %d  tokens %d  cost $%.6f\n", s.Entries, s.Messages, s.ToolCalls, s.Tokens.Total, s.Cost)
	fmt.Fprintf(w, "created %s  last activity %s  through sequence %d\n\n", s.Created, s.LastActivity, s.LastSeq)
	byID := map[string]client.TreeNode{}
	for _, n := range r.Tree.Nodes {
		byID[n.ID] = n
	}
	var walk func(id string, depth int)
	walk = func(id string, depth int) {
		n := byID[id]
		mark := " "
		if s.Leaf != nil && *s.Leaf == id {
			mark = "*"
		}
		kind := n.Type
		if n.Role != "" {
			kind += "/" + n.Role
		}
		label := ""
		if n.Label != "" {
			label = "  [" + n.Label + "]"
		}
		fmt.Fprintf(w, "%s %s%s %s  %s%s\n", mark, strings.Repeat("  ", depth), id, kind, n.Timestamp, label)
		// A chain of only children stays at one depth; branches indent.
		for _, c := range n.Children {
			d := depth
			if len(n.Children) > 1 {
				d++
			}
			walk(c, d)
		}
	}
	for _, n := range r.Tree.Nodes {
		if n.ParentID == nil {
			walk(n.ID, 0)
		} else if _, ok := byID[*n.ParentID]; !ok {
			walk(n.ID, 0) // parent unknown: show it as a root
		}
	}
}
