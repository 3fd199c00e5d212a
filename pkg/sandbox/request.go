package sandbox

import (
	"encoding/json"

	"github.com/cairn-agents/cairn/pkg/tool"
)

// childArg0 is the argv[0] that makes a process started from this binary
// the sandbox child instead of itself (see [init] in child.go).
const childArg0 = "cairn-sandbox-child"

// Modes of the child.
const (
	modeExec  = "exec"  // confine, then exec Argv (bash -c)
	modeTool  = "tool"  // confine, then run a built-in file tool in Go
	modeProbe = "probe" // report what confinement the child could apply
)

// request is what the parent writes to the child's stdin, as JSON, then
// closes. The child reads it before anything else and puts /dev/null on its
// stdin before it runs a tool.
type request struct {
	Mode      string     `json:"mode"`
	Workspace string     `json:"workspace"`     // read-write, the working directory
	Tmp       string     `json:"tmp,omitempty"` // read-write, TMPDIR
	Confine   confine    `json:"confine"`
	Argv      []string   `json:"argv,omitempty"` // modeExec
	Env       []string   `json:"env,omitempty"`  // modeExec: the whole environment
	Tool      string     `json:"tool,omitempty"` // modeTool
	Call      *tool.Call `json:"call,omitempty"`
	Lines     int        `json:"lines,omitempty"` // modeTool output limit
	Bytes     int        `json:"bytes,omitempty"`
}

// confine is what the child applies, decided by the parent from the probe
// and the level. A layer asked for that cannot be applied fails the call.
type confine struct {
	MountProc bool     `json:"mountProc"` // private mounts, a fresh /proc, an empty /run
	Landlock  bool     `json:"landlock"`
	TCP       bool     `json:"tcp"` // Landlock TCP rules (ABI >= 4)
	Ports     []uint16 `json:"ports,omitempty"`
	ReadOnly  []string `json:"readOnly,omitempty"`
	Cgroup    string   `json:"cgroup,omitempty"` // cgroup.procs file to join
	Rlimits   rlimits  `json:"rlimits"`
}

type rlimits struct {
	CPUSeconds uint64 `json:"cpu"`
	AS         uint64 `json:"as"` // 0: not set (file tools)
	FSize      uint64 `json:"fsize"`
	NoFile     uint64 `json:"nofile"`
	NProc      uint64 `json:"nproc"` // 0: not set
}

// response is what a modeTool or modeProbe child writes to stdout.
type response struct {
	Result *tool.Result    `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Kind   string          `json:"kind,omitempty"` // "outside", "invalid" or ""
	Probe  json.RawMessage `json:"probe,omitempty"`
}
