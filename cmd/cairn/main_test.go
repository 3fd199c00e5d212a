package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runCairn runs the binary's run function with args and returns its exit
// status, stdout and stderr.
func runCairn(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}
