package main

import (
	"fmt"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
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

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "cairn",
		Short:         "Cairn: an event-sourced platform for running many LLM agents",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("server", envOr("CAIRN_SERVER", "http://127.0.0.1:8080"), "gateway URL (env CAIRN_SERVER)")
	// No default from the environment: --help would print the token.
	root.PersistentFlags().String("token", "", "API key or OIDC token sent to the gateway (env CAIRN_TOKEN; default: the key `cairn up` recorded for --server)")
	root.PersistentFlags().String("tenant", envOr("CAIRN_TENANT", ""), "act for this tenant (the Cairn-Tenant header; platform admins only) (env CAIRN_TENANT; default the token's own)")
	root.AddCommand(
		newConvertCmd(e),
		newUpCmd(e),
		newOrchestratorCmd(e),
		newToolrunnerCmd(e),
		newCompactorCmd(e),
		newProjectorCmd(e),
		newGatewayCmd(e),
		newSessionCmd(e),
		newPromptCmd(e),
		sendCmd(e, "steer ID TEXT", "queue a steering message for the running agent", events.CmdSteer, true),
		sendCmd(e, "follow-up ID TEXT", "queue a message for when the agent would stop", events.CmdFollowUp, true),
		sendCmd(e, "abort ID", "abort the running turn", events.CmdAbort, false),
		newNavigateCmd(e),
		newApprovalsCmd(e),
		newApproveCmd(e),
		newDenyCmd(e),
		newSessionsCmd(e),
		newLogCmd(e),
		newTreeCmd(e),
		newContextCmd(e),
		newExportCmd(e),
		newImportCmd(e),
		newAuditCmd(),
		newReplayCmd(e),
		newRunCmd(e),
		newBenchCmd(e),
		newDemoCmd(e),
		newProvisionCmd(e),
		newBudgetCmd(e),
		newSubagentsCmd(e),
		newKeysCmd(e),
		newResourceCmd(e, "skill"),
		newResourceCmd(e, "template"),
		newResourceCmd(e, "system"),
		newResourcesCmd(e),
		newHealthcheckCmd(e),
	)
	return root
}

func newAuditCmd() *cobra.Command {
	c := &cobra.Command{Use: "audit", Short: "audit the log"}
	c.AddCommand(newAuditVerifyCmd())
	return c
}
