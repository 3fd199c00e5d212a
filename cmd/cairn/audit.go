package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/sessiontree"
)

func newAuditVerifyCmd() *cobra.Command {
	var lf logFlags
	c := &cobra.Command{
		Use:   "verify [ID]",
		Short: "check the hash chain and tree of one session, or of every session",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			var ids []string
			if len(args) == 1 {
				if err := sessionArg(args[0]); err != nil {
					return err
				}
				ids = args
			}
			l, closeLog, err := lf.open(ctx, false)
			if err != nil {
				return err
			}
			defer closeLog()
			if ids == nil {
				if ids, err = l.Sessions(ctx); err != nil {
					return err
				}
				slices.Sort(ids)
			}
			bad := 0
			for _, sid := range ids {
				problems, n, err := verifySession(cmd, l, sid)
				if err != nil {
					return err
				}
				if len(problems) == 0 {
					fmt.Fprintf(out, "ok   %s  %d entries\n", sid, n)
					continue
				}
				bad++
				for _, p := range problems {
					fmt.Fprintf(out, "FAIL %s  %s\n", sid, p)
				}
			}
			if bad > 0 {
				return fmt.Errorf("audit: %d of %d sessions failed verification", bad, len(ids))
			}
			return nil
		},
	}
	lf.add(c)
	return c
}

// verifySession reads sid from the stream itself (not a snapshot) and
// returns what is wrong with it and how many entries it has.
func verifySession(cmd *cobra.Command, l *session.JetStreamLog, sid string) ([]string, int, error) {
	recs, err := l.ReadStream(cmd.Context(), sid)
	if errors.Is(err, session.ErrCorrupt) {
		return []string{err.Error()}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if len(recs) == 0 {
		return nil, 0, fmt.Errorf("session %s: %w", sid, session.ErrNotFound)
	}
	var problems []string
	for _, p := range session.VerifyChain(recs) {
		problems = append(problems, p.Error())
	}
	entries := make([]events.Entry, len(recs))
	for i := range recs {
		entries[i] = recs[i].Entry
	}
	if h := entries[0]; h.Type != events.EntrySession || h.ID != sid {
		problems = append(problems, fmt.Sprintf("the first entry is a %q entry %q, not the session's header", h.Type, h.ID))
	}
	if _, err := sessiontree.NewIndex(entries); err != nil {
		problems = append(problems, err.Error())
	}
	return problems, len(recs), nil
}
