package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// usageError is a mistake in how cairn was called: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// isCobraUsageErr recognises cobra's own argument and flag errors, which it
// returns as plain errors.
func isCobraUsageErr(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "requires at most", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// errNotBuilt is returned by subcommands whose part of Cairn does not exist yet.
func errNotBuilt(what string) error {
	return errors.New(what + " is not built yet; see the open issues in docs/ROADMAP.md")
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "cairn",
		Short:         "Cairn: an event-sourced platform for running many LLM agents",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("server", envOr("CAIRN_SERVER", "http://127.0.0.1:8080"), "gateway URL (env CAIRN_SERVER)")
	root.AddCommand(
		newConvertCmd(e),
		newUpCmd(e),
		notBuilt("orchestrator", "run the orchestrator service", "the orchestrator"),
		newToolrunnerCmd(e),
		notBuilt("compactor", "run a compaction worker", "the compactor"),
		newProjectorCmd(e),
		newGatewayCmd(e),
		newSessionCmd(),
		notBuilt("prompt ID TEXT", "send a prompt and follow the live output", "the gateway"),
		notBuilt("steer ID TEXT", "queue a steering message", "the gateway"),
		notBuilt("follow-up ID TEXT", "queue a follow-up message", "the gateway"),
		notBuilt("abort ID", "abort the running turn", "the gateway"),
		notBuilt("sessions", "list sessions", "the gateway"),
		newLogCmd(e),
		newTreeCmd(e),
		notBuilt("context ID", "print the context the model would see", "the gateway"),
		newExportCmd(e),
		newImportCmd(e),
		newAuditCmd(),
		newReplayCmd(e),
		notBuilt("run TEXT", "run one prompt to completion", "the platform (cairn run)"),
		notBuilt("bench", "measure the platform", "cairn bench"),
		notBuilt("demo", "run a demonstration", "cairn demo"),
		notBuilt("provision", "create streams, consumers and buckets", "provisioning"),
	)
	return root
}

func notBuilt(use, short, what string) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short + " (not built yet)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return errNotBuilt(what)
		},
	}
}

func newSessionCmd() *cobra.Command {
	c := &cobra.Command{Use: "session", Short: "manage sessions"}
	c.AddCommand(notBuilt("new", "create a session and print its id", "the gateway"))
	return c
}

func newAuditCmd() *cobra.Command {
	c := &cobra.Command{Use: "audit", Short: "audit the log"}
	c.AddCommand(newAuditVerifyCmd())
	return c
}
