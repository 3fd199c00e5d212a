package main

import (
	"bufio"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/events"
)

func newExportCmd(e *env) *cobra.Command {
	var lf logFlags
	var format string
	c := &cobra.Command{
		Use:   "export ID",
		Short: "export a session as a pi v3 file or as Cairn's JSON lines",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if format != "pi" && format != "jsonl" {
				return usagef("--format must be pi or jsonl, got %q", format)
			}
			s, closeLog, err := lf.load(ctx, args[0])
			if err != nil {
				return err
			}
			defer closeLog()
			if format == "pi" {
				entries := s.Entries()
				return events.WritePiFile(e.stdout, entries[0], entries[1:])
			}
			w := bufio.NewWriter(e.stdout)
			for _, r := range s.Records() {
				line, err := json.Marshal(r.Entry)
				if err != nil {
					return err
				}
				w.Write(line)
				w.WriteByte('\n')
			}
			return w.Flush()
		},
	}
	c.Flags().StringVar(&format, "format", "pi", "pi (pi v3 session file) or jsonl (Cairn's entries with their digests)")
	lf.add(c)
	return c
}
