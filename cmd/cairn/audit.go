package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/session"
)

func newAuditVerifyCmd() *cobra.Command {
	var lf logFlags
	c := &cobra.Command{
		Use:   "verify [ID]",
		Short: "check the hash chain and tree of one session, or of every session",
		Long: `Read each session's entries as the stream stores them and check, here, that
every entry's parent digest is the digest of the bytes before it, that the first
entry is the session's header and that the entries form a tree. Through the
gateway the bytes come from GET .../records (read from the stream, not a
snapshot or read model) and every session is one the read model lists; with
--nats they are read from NATS and every session is one the stream holds.`,
		Args: cobra.MaximumNArgs(1),
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		out := cmd.OutOrStdout()
		var ids []string
		if len(args) == 1 {
			if err := sessionArg(args[0]); err != nil {
				return err
			}
			ids = args
		}
		direct, err := lf.direct(cmd)
		if err != nil {
			return err
		}
		var verify func(sid string) (client.Verification, error)
		if direct {
			l, closeLog, err := lf.open(ctx, false)
			if err != nil {
				return err
			}
			defer closeLog()
			if ids == nil {
				refs, err := l.Sessions(ctx)
				if err != nil {
					return err
				}
				for _, r := range refs {
					ids = append(ids, cliSession(r))
				}
			}
			verify = func(sid string) (client.Verification, error) { return verifyFromNATS(ctx, l, sid) }
		} else {
			cl, err := clientFrom(cmd)
			if err != nil {
				return err
			}
			if ids == nil {
				if ids, err = listAll(ctx, cl); err != nil {
					return err
				}
			}
			verify = func(sid string) (client.Verification, error) { return cl.VerifySession(ctx, sid) }
		}
		slices.Sort(ids)
		bad := 0
		for _, sid := range ids {
			v, err := verify(sid)
			if err != nil {
				return err
			}
			if v.OK() {
				fmt.Fprintf(out, "ok   %s  %d entries\n", sid, v.Entries)
				continue
			}
			bad++
			for _, p := range v.Problems {
				fmt.Fprintf(out, "FAIL %s  %s\n", sid, p)
			}
		}
		if bad > 0 {
			return fmt.Errorf("audit: %d of %d sessions failed verification", bad, len(ids))
		}
		return nil
	}
	lf.add(c)
	return c
}

// listAll returns the id of every session the read model lists. A session
// whose activity changes while the pages are read moves to the front of
// the listing, past where the reading is: a second look at the front, down
// to the activity the first page began with, finds those.
func listAll(ctx context.Context, cl *client.Client) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	newest := ""
	for s, err := range cl.AllSessions(ctx, 1000) {
		if err != nil {
			return nil, err
		}
		if newest == "" {
			newest = s.LastActivity
		}
		if !seen[s.ID] {
			seen[s.ID] = true
			ids = append(ids, s.ID)
		}
	}
	for s, err := range cl.AllSessions(ctx, 100) {
		if err != nil {
			return nil, err
		}
		if s.LastActivity < newest {
			break
		}
		if !seen[s.ID] {
			seen[s.ID] = true
			ids = append(ids, s.ID)
		}
	}
	return ids, nil
}

// verifyFromNATS reads sid from the stream itself (not a snapshot) and
// checks it as the gateway path does.
func verifyFromNATS(ctx context.Context, l *session.JetStreamLog, sid string) (client.Verification, error) {
	ref, err := parseCLISession(sid)
	if err != nil {
		return client.Verification{}, err
	}
	recs, err := l.ReadStream(ctx, ref)
	if errors.Is(err, session.ErrCorrupt) {
		return client.Verification{Session: sid, Problems: []client.Problem{{Kind: client.ProblemCorrupt, Detail: err.Error()}}}, nil
	}
	if err != nil {
		return client.Verification{}, err
	}
	if len(recs) == 0 {
		return client.Verification{}, fmt.Errorf("session %s: %w", sid, session.ErrNotFound)
	}
	return client.Verify(sid, fromSession(recs)), nil
}
