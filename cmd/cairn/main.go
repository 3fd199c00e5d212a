// Command cairn is Cairn's one binary: every service as a subcommand, the
// client commands, and `cairn up`, which runs the whole platform in one process.
//
// Exit status: 0 on success, 1 on failure (one line on stderr), 2 on usage
// errors.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal asks for a graceful shutdown; restoring the
		// default handling makes a second one end the process at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one invocation of cairn and returns its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(&env{stdin: stdin, stdout: stdout, stderr: stderr})
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	tr := setupTelemetry(root, &env{stdin: stdin, stdout: stdout, stderr: stderr})
	err := root.ExecuteContext(ctx)
	tr.flush()
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "cairn:", err)
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsageErr(err) {
		return 2
	}
	return 1
}

// env is what every subcommand may use instead of the process's globals.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}
