// Package child is the sandbox child's first part: its init, which runs
// before the heavier packages of the binary are initialised (it imports
// only the standard library's early packages, golang.org/x/sys/unix and
// go-landlock; Go initialises packages in import-path order once their
// imports are done, so each import that sorts late, as net and os/exec did,
// lets every ready package before it go first: keep it so, see
// pkg/sandbox's TestChildInitComesBeforeHeavyPackages), reads the request,
// and for bash confines the process and execs at once, Landlock bound to
// the one thread that execs. A file tool's request is left in [Pending]
// for internal/toolchild's init, which runs the tool's Go code once
// pkg/tools and its imports are initialised (pkg/tool's JSON Schema
// library compiles its meta-schemas at init); a child started ahead for a
// file tool ([ArgWarmTool]) reads its request there. The allowed-hosts
// bridge (argv[1] [ArgBridge]) is internal/bridge's init.
//
// # Errors
//
// A child that cannot confine itself exits [ExitSetup] with "sandbox:" and
// the reason on stderr.
package child

import (
	"encoding/json"
)

// Arg0 is the argv[0] that makes a process started from this binary
// the sandbox child instead of itself (see this package's init).
const Arg0 = "cairn-sandbox-child"

// ArgWarm, as argv[1], makes a child started ahead of its call: it joins
// the cgroup whose cgroup.procs is argv[2], if given, at once; its stdin is
// a unix socket on which the first byte of the request carries the
// descriptor to use as stdout and stderr; only ModeExec is accepted.
const ArgWarm = "warm"

// ArgWarmTool, as argv[1], makes a child started ahead of a file tool's
// call: internal/child's init leaves it alone, so every package of the
// binary is initialised before it reads its request (as ArgWarm's, from a
// unix socket with the descriptor for stdout and stderr) in
// internal/toolchild's init; only ModeTool is accepted.
const ArgWarmTool = "warm-tool"

// Modes of the child.
const (
	ModeExec  = "exec"  // confine, then exec Argv (bash -c)
	ModeTool  = "tool"  // confine, then run a built-in file tool in Go
	ModeProbe = "probe" // report what confinement the child could apply
)

// Request is what the parent writes to the child's stdin, as JSON, then
// closes. The child reads it before anything else and puts /dev/null on its
// stdin before it runs a tool.
type Request struct {
	Mode      string          `json:"mode"`
	Workspace string          `json:"workspace"`     // read-write, the working directory
	Tmp       string          `json:"tmp,omitempty"` // read-write, TMPDIR
	Confine   Confine         `json:"confine"`
	Argv      []string        `json:"argv,omitempty"`  // ModeExec
	Env       []string        `json:"env,omitempty"`   // ModeExec: the whole environment
	Tool      string          `json:"tool,omitempty"`  // ModeTool
	Call      json.RawMessage `json:"call,omitempty"`  // ModeTool: a tool.Call
	Lines     int             `json:"lines,omitempty"` // ModeTool output limit
	Bytes     int             `json:"bytes,omitempty"`
}

// Confine is what the child applies, decided by the parent from the probe
// and the level. A layer asked for that cannot be applied fails the call.
type Confine struct {
	MountProc bool     `json:"mountProc"` // private mounts, a fresh /proc
	HideRun   bool     `json:"hideRun"`   // with MountProc: an empty /run (the call's directories are not under it)
	Landlock  bool     `json:"landlock"`
	TCP       bool     `json:"tcp"` // Landlock TCP rules (ABI >= 4)
	Ports     []uint16 `json:"ports,omitempty"`
	Proxy     string   `json:"proxy,omitempty"` // path of the allowed-hosts proxy socket: start the bridge
	ProxyPort int      `json:"proxyPort,omitempty"`
	ReadOnly  []string `json:"readOnly,omitempty"`
	Cgroup    string   `json:"cgroup,omitempty"` // cgroup.procs file to join
	Rlimits   Rlimits  `json:"rlimits"`
}

type Rlimits struct {
	CPUSeconds uint64 `json:"cpu"`
	AS         uint64 `json:"as"` // 0: not set (file tools)
	FSize      uint64 `json:"fsize"`
	NoFile     uint64 `json:"nofile"`
	NProc      uint64 `json:"nproc"` // 0: not set
}

// Error kinds a tool child reports in Response.Kind, so the parent's error
// matches what the tool's own error matched.
const (
	KindOutside = "outside" // tools.ErrOutside
	KindInvalid = "invalid" // events.ErrInvalid
)

// Response is what a ModeTool or ModeProbe child writes to stdout.
type Response struct {
	Result json.RawMessage `json:"result,omitempty"` // a tool.Result
	Error  string          `json:"error,omitempty"`
	Kind   string          `json:"kind,omitempty"` // KindOutside, KindInvalid or ""
	Probe  json.RawMessage `json:"probe,omitempty"`
}
