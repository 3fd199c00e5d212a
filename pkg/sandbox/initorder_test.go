package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	// Heavy packages the cairn binary links, linked into this test binary
	// too so that the test below sees what the real child does.
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/nats-io/nats-server/v2/server"
	_ "github.com/nats-io/nats.go"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "go.opentelemetry.io/otel/sdk/resource"
)

// heavy are packages whose init a bash call's child must not wait for: the
// heaviest measured (jsonschema compiles its meta-schemas) and the large
// ones of the binary.
var heavy = []string{
	"github.com/santhosh-tekuri/jsonschema/v6",
	"github.com/nats-io/nats-server/v2/server",
	"github.com/nats-io/nats.go",
	"github.com/prometheus/client_golang/prometheus",
	"go.opentelemetry.io/otel/sdk/resource",
	"github.com/cockroachdb/pebble/v2",
}

// inits runs this test binary with GODEBUG=inittrace=1, as argv and with
// stdin, and returns the packages whose init ran, in order.
func inits(t *testing.T, argv []string, stdin string) []string {
	t.Helper()
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = argv
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run() // the child's exit status is its own business; the trace is what counts
	var pkgs []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" && strings.HasPrefix(f[2], "@") {
			pkgs = append(pkgs, strings.ReplaceAll(f[1], "%2e", "."))
		}
	}
	return pkgs
}

// TestChildInitComesBeforeHeavyPackages: a sandbox child (here a probe,
// which like a bash call's child does all its work and exits inside
// internal/child's init) starts before any heavy package of the binary is
// initialised. Go initialises packages in import-path order as soon as
// their imports are, so one import of internal/child that sorts late (net
// did: vendor/golang.org/x/net/dns/dnsmessage) lets every ready package go
// first (about four fifths of the binary's inits came before the child's);
// this fails if that comes back.
func TestChildInitComesBeforeHeavyPackages(t *testing.T) {
	all := inits(t, []string{os.Args[0], "-test.run=^$"}, "")
	for _, h := range heavy {
		if !slices.Contains(all, h) {
			t.Fatalf("%s has no init in this test binary's trace (%d packages): the test would prove nothing", h, len(all))
		}
	}
	before := inits(t, []string{"cairn-sandbox-child"}, `{"mode":"probe","confine":{"rlimits":{}}}`)
	if len(before) == 0 || len(before) >= len(all) {
		t.Fatalf("the probe child initialised %d of %d packages: not the trace of a child that exits in its init", len(before), len(all))
	}
	for _, h := range append(heavy, "net") {
		if slices.Contains(before, h) {
			t.Errorf("%s is initialised before the sandbox child's init runs", h)
		}
	}
	if 2*len(before) > len(all) {
		t.Errorf("%d of the binary's %d package inits run before the sandbox child's: some import of internal/child holds it back",
			len(before), len(all))
	}
	t.Logf("the child runs after %d of the binary's %d package inits", len(before), len(all))
}
