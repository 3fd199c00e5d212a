package main

import (
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
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if id != "" {
				if err := sessionArg(id); err != nil {
					return err
				}
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			header, entries, err := events.ReadPiFile(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if id != "" {
				header.ID = id
			}
			if err := events.ValidateSessionID(header.ID); err != nil {
				return fmt.Errorf("%s: the header's %w; choose one with --id", args[0], err)
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
			if err := l.WriteSnapshot(ctx, s.ID(), s.Records()); err != nil {
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
