package sandbox

// The child's parts, each an init that takes over a process started as the
// sandbox child (argv[0] child.Arg0); see the package doc for their order.
import (
	_ "github.com/cairn-agents/cairn/pkg/sandbox/internal/bridge"    // the allowed-hosts bridge
	_ "github.com/cairn-agents/cairn/pkg/sandbox/internal/toolchild" // a file tool's call
)
