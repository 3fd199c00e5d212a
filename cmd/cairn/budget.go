package main

import (
	"encoding/json"
	"fmt"
	"math"
	"text/tabwriter"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/spf13/cobra"
)

// newBudgetCmd is `cairn budget set|get TENANT` (docs/budgets.md).
func newBudgetCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "budget", Short: "set and read a tenant's budget (tokens and cost per day, concurrent runs)"}
	set := &cobra.Command{Use: "set TENANT", Short: "change a tenant's budget; the limits not given stay as they are (0 = no limit)", Args: cobra.ExactArgs(1)}
	tokens := set.Flags().Int64("tokens-per-day", 0, "tokens per UTC day (0 = no limit)")
	cost := set.Flags().Float64("cost-per-day", 0, "US dollars per UTC day (0 = no limit)")
	runs := set.Flags().Int64("concurrent-runs", 0, "runs in progress at once (0 = no limit)")
	setJSON := set.Flags().Bool("json", false, "print the answer as JSON")
	set.RunE = func(cmd *cobra.Command, args []string) error {
		f := cmd.Flags()
		if !f.Changed("tokens-per-day") && !f.Changed("cost-per-day") && !f.Changed("concurrent-runs") {
			return usagef("budget set: give at least one of --tokens-per-day, --cost-per-day, --concurrent-runs")
		}
		switch {
		case *tokens < 0:
			return usagef("--tokens-per-day: must not be negative, got %d", *tokens)
		case *runs < 0:
			return usagef("--concurrent-runs: must not be negative, got %d", *runs)
		case math.IsNaN(*cost) || math.IsInf(*cost, 0) || *cost < 0:
			return usagef("--cost-per-day: must be a number of US dollars from 0 up, got %v", *cost)
		}
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		cur, err := cl.Budget(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		b := cur.Budget
		if f.Changed("tokens-per-day") {
			b.TokensPerDay = *tokens
		}
		if f.Changed("cost-per-day") {
			b.CostPerDay = *cost
		}
		if f.Changed("concurrent-runs") {
			b.ConcurrentRuns = *runs
		}
		st, err := cl.SetBudget(cmd.Context(), args[0], b)
		if err != nil {
			return err
		}
		return printBudget(e, st, *setJSON)
	}
	get := &cobra.Command{Use: "get TENANT", Short: "print a tenant's budget with today's use", Args: cobra.ExactArgs(1)}
	getJSON := get.Flags().Bool("json", false, "print the answer as JSON")
	get.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		st, err := cl.Budget(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		return printBudget(e, st, *getJSON)
	}
	c.AddCommand(set, get)
	return c
}

func printBudget(e *env, st client.BudgetStatus, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	limit := func(v float64, format string) string {
		if v == 0 {
			return "no limit"
		}
		return fmt.Sprintf(format, v)
	}
	t := st.Today
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TENANT\t%s\ttoday %s (UTC)\n", st.Tenant, t.Day)
	fmt.Fprintf(tw, "tokensPerDay\t%s\tused %d, reserved %d, %d calls\n", limit(float64(st.TokensPerDay), "%.0f"), t.Tokens, t.ReservedTokens, t.Calls)
	fmt.Fprintf(tw, "costPerDay\t%s\tused $%.4f, reserved $%.4f\n", limit(st.CostPerDay, "$%.2f"), t.Cost, t.ReservedCost)
	fmt.Fprintf(tw, "concurrentRuns\t%s\tin progress %d\n", limit(float64(st.ConcurrentRuns), "%.0f"), t.Runs)
	return tw.Flush()
}
