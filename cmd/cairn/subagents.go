package main

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/spf13/cobra"
)

// newSubagentsCmd is `cairn subagents set|get TENANT` (docs/subagents.md).
func newSubagentsCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "subagents", Short: "set and read a tenant's sub-agent limits (depth, task calls per batch)"}
	set := &cobra.Command{Use: "set TENANT", Short: "change a tenant's sub-agent limits; a limit not given stays as it is", Args: cobra.ExactArgs(1)}
	depth := set.Flags().Int("max-depth", 0, "the deepest a sub-agent may be (1 = children of top-level sessions only; 0 = no sub-agents)")
	fanOut := set.Flags().Int("max-fan-out", 0, "the most task calls one batch may start")
	setJSON := set.Flags().Bool("json", false, "print the answer as JSON")
	set.RunE = func(cmd *cobra.Command, args []string) error {
		f := cmd.Flags()
		if !f.Changed("max-depth") && !f.Changed("max-fan-out") {
			return usagef("subagents set: give --max-depth, --max-fan-out or both")
		}
		if *depth < 0 || *fanOut < 0 {
			return usagef("--max-depth and --max-fan-out must not be negative")
		}
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		l, err := cl.SubagentLimits(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if f.Changed("max-depth") {
			l.MaxDepth = *depth
		}
		if f.Changed("max-fan-out") {
			l.MaxFanOut = *fanOut
		}
		if l, err = cl.SetSubagentLimits(cmd.Context(), args[0], l); err != nil {
			return err
		}
		return printSubagents(e, l, *setJSON)
	}
	get := &cobra.Command{Use: "get TENANT", Short: "print a tenant's sub-agent limits", Args: cobra.ExactArgs(1)}
	getJSON := get.Flags().Bool("json", false, "print the answer as JSON")
	get.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		l, err := cl.SubagentLimits(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return printSubagents(e, l, *getJSON)
	}
	c.AddCommand(set, get)
	return c
}

func printSubagents(e *env, l client.SubagentLimits, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(e.stdout).Encode(l)
	}
	_, err := fmt.Fprintf(e.stdout, "max depth    %d\nmax fan-out  %d\n", l.MaxDepth, l.MaxFanOut)
	return err
}
