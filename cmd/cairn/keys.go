package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/services/gateway"
	"github.com/spf13/cobra"
)

// newKeysCmd is `cairn keys`: API keys on the gateway (docs/security.md).
func newKeysCmd(e *env) *cobra.Command {
	c := &cobra.Command{Use: "keys", Short: "manage API keys (create, list, revoke)"}

	create := &cobra.Command{Use: "create", Short: "create an API key and print its token (shown this once)", Args: cobra.NoArgs}
	role := create.Flags().String("role", "", "admin, tenant-admin, member or viewer (required)")
	tenant := create.Flags().String("tenant", "", "the key's tenant (default: the caller's)")
	name := create.Flags().String("name", "", "what the key is for")
	create.RunE = func(cmd *cobra.Command, _ []string) error {
		if *role == "" {
			return usagef("--role is required: admin, tenant-admin, member or viewer")
		}
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		k, err := cl.CreateKey(cmd.Context(), client.CreateKey{Role: *role, Tenant: *tenant, Name: *name})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "key %s (%s of tenant %s): the token below is shown only now\n", k.ID, k.Role, k.Tenant)
		fmt.Fprintln(e.stdout, k.Token)
		return nil
	}

	list := &cobra.Command{Use: "list", Short: "list API keys (never their tokens)", Args: cobra.NoArgs}
	listTenant := list.Flags().String("tenant", "", "only this tenant's (admin)")
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		keys, err := cl.ListKeys(cmd.Context(), *listTenant)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTENANT\tROLE\tNAME\tCREATED\tBY\tREVOKED")
		for _, k := range keys {
			revoked := ""
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.UTC().Format(time.RFC3339) + " by " + k.RevokedBy
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Tenant, k.Role, k.Name,
				k.CreatedAt.UTC().Format(time.RFC3339), k.CreatedBy, revoked)
		}
		return tw.Flush()
	}

	revoke := &cobra.Command{Use: "revoke ID", Short: "revoke an API key on every gateway", Args: cobra.ExactArgs(1)}
	revoke.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		k, err := cl.RevokeKey(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "revoked %s\n", k.ID)
		return nil
	}

	generate := &cobra.Command{Use: "generate", Short: "print a fresh API key for a bootstrap key file, without any server", Args: cobra.NoArgs}
	generate.RunE = func(*cobra.Command, []string) error {
		key, _, err := gateway.NewKey()
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, key.Reveal())
		return nil
	}
	c.AddCommand(create, list, revoke, generate)
	return c
}
