package main

import (
	"github.com/spf13/cobra"
)

func newConvertCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "convert IN.jsonl OUT.jsonl",
		Short: "convert a pi session file (v1-v3) to a pi v3 file through Cairn's types",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return errNotBuilt("cairn convert")
		},
	}
}
