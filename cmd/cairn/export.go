package main

import (
	"bufio"

	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/events"
)

func newExportCmd(e *env) *cobra.Command {
	var lf logFlags
	var format string
	c := &cobra.Command{
		Use:   "export ID",
		Short: "export a session as a pi v3 file or as Cairn's JSON lines",
		Long: `Write session ID to stdout: --format pi (default) as a pi v3 session file,
--format jsonl as Cairn's entries one a line, parent digests included. Through
the gateway, jsonl entries are the stored bytes (large parts as blob
references); with --nats they are the entries with large parts restored.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if format != "pi" && format != "jsonl" {
				return usagef("--format must be pi or jsonl, got %q", format)
			}
			if err := sessionArg(args[0]); err != nil {
				return err
			}
			direct, err := lf.direct(cmd)
			if err != nil {
				return err
			}
			if !direct {
				cl, err := clientFrom(cmd)
				if err != nil {
					return err
				}
				w := bufio.NewWriter(e.stdout)
				if err := cl.Export(ctx, args[0], format, w); err != nil {
					return err
				}
				return w.Flush()
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
			var line []byte
			for _, r := range s.Records() {
				data, err := r.Entry.MarshalJSON() // one line by construction
				if err != nil {
					return err
				}
				if line, err = events.AppendLine(line[:0], data); err != nil {
					return err
				}
				w.Write(line)
			}
			return w.Flush()
		},
	}
	c.Flags().StringVar(&format, "format", "pi", "pi (pi v3 session file) or jsonl (Cairn's entries with their digests)")
	lf.add(c)
	return c
}
