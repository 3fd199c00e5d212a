package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/session"
)

func newImportCmd(e *env) *cobra.Command {
	var lf logFlags
	var id string
	c := &cobra.Command{
		Use:   "import FILE",
		Short: "import a pi session file (v1-v3) into the log",
		Long: `Write the pi session file FILE (versions 1 to 3, migrated to 3) as a new
session, under --id or the file's own id, and print the id. A session of that id
that exists already is refused. The file is checked here first, so a mistake is
named with its line before anything is sent.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if id != "" {
				if err := sessionArg(id); err != nil {
					return err
				}
			}
			direct, err := lf.direct(cmd)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			header, entries, err := events.ReadPiFile(bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if id != "" {
				header.ID = id
			}
			if err := events.ValidateSessionID(header.ID); err != nil {
				return fmt.Errorf("%s: the header's %w; choose one with --id", args[0], err)
			}
			if !direct {
				cl, err := clientFrom(cmd)
				if err != nil {
					return err
				}
				out, err := cl.Import(ctx, bytes.NewReader(data), id)
				if err != nil {
					return fmt.Errorf("import %s: %w", header.ID, err)
				}
				fmt.Fprintln(e.stdout, out.ID)
				return nil
			}
			l, closeLog, err := lf.open(ctx, true)
			if err != nil {
				return err
			}
			defer closeLog()
			s, err := session.Create(ctx, l, header)
			if err != nil {
				return err
			}
			for i, en := range entries {
				if _, err := s.AppendExact(ctx, en); err != nil {
					return fmt.Errorf("import %s: entry %d (%s): %w", header.ID, i+1, en.ID, err)
				}
			}
			if err := l.WriteSnapshot(ctx, s.Ref(), s.Records()); err != nil {
				return fmt.Errorf("import %s: snapshot: %w", s.ID(), err)
			}
			fmt.Fprintf(e.stdout, "%s\n", s.ID())
			return nil
		},
	}
	c.Flags().StringVar(&id, "id", "", "session id to import as (default: the file's)")
	lf.add(c)
	return c
}
