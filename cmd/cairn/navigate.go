package main

import (
	"fmt"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/spf13/cobra"
)

// newNavigateCmd moves a session's leaf as pi's tree navigation does and
// prints the command id, then, when the target was a user message, the
// message's text, handed back for editing (the leaf is now its parent).
func newNavigateCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "navigate ID ENTRY",
		Short: "move the session's leaf to an entry (a user message: to its parent, and print its text to edit)",
		Args:  cobra.ExactArgs(2),
	}
	summarize := c.Flags().Bool("summarize", false, "summarize the branch being left")
	instructions := c.Flags().String("instructions", "", "instructions for the branch summary")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cl, err := clientFrom(cmd)
		if err != nil {
			return err
		}
		entry := args[1]
		nav := client.Navigate(&entry)
		nav.Summarize, nav.Instructions = *summarize, *instructions
		out, err := cl.Send(cmd.Context(), args[0], nav, client.WaitApplied())
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, out.CommandID)
		if out.EditorText != "" {
			fmt.Fprintln(e.stdout, out.EditorText)
		}
		return nil
	}
	return c
}
