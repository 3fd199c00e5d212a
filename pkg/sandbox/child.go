package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/tools"
)

// maxRequest bounds what the child reads from its stdin.
const maxRequest = 64 << 20

// exitSetup is the child's exit code when it could not confine itself; the
// message is on its stderr (for bash, in the output the model sees).
const exitSetup = 125

// init turns any binary that links this package into the sandbox child
// when it was started with argv[0] = childArg0: the toolrunner re-executes
// its own binary (/proc/self/exe), cairn or a test binary alike, and the
// child never reaches main or the tests.
func init() {
	if len(os.Args) > 0 && os.Args[0] == childArg0 {
		os.Exit(childMain())
	}
}

func childMain() int {
	data, err := io.ReadAll(io.LimitReader(os.Stdin, maxRequest))
	if err != nil {
		return setupFailed(fmt.Errorf("read the request: %w", err))
	}
	var req request
	if err := json.Unmarshal(data, &req); err != nil {
		return setupFailed(fmt.Errorf("decode the request: %w", err))
	}
	if err := nullStdin(); err != nil {
		return setupFailed(err)
	}
	switch req.Mode {
	case modeProbe:
		return childProbe(req)
	case modeExec:
		return childExec(req)
	case modeTool:
		return childTool(req)
	}
	return setupFailed(fmt.Errorf("unknown mode %q", req.Mode))
}

func setupFailed(err error) int {
	fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
	return exitSetup
}

// nullStdin replaces the request pipe on fd 0 with /dev/null.
func nullStdin() error {
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/null: %w", err)
	}
	defer func() { _ = syscall.Close(fd) }()
	if err := syscall.Dup3(fd, 0, 0); err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	return nil
}

// childExec confines the process and replaces it with Argv.
func childExec(req request) int {
	if len(req.Argv) == 0 {
		return setupFailed(errors.New("exec: no command"))
	}
	bin, err := lookPath(req.Argv[0], req.Env)
	if err != nil {
		return setupFailed(err)
	}
	if err := apply(req); err != nil {
		return setupFailed(err)
	}
	err = syscall.Exec(bin, req.Argv, req.Env)
	return setupFailed(fmt.Errorf("exec %s: %w", bin, err))
}

// childTool confines the process, runs one built-in tool in Go and writes
// its result to stdout.
func childTool(req request) int {
	if req.Call == nil {
		return setupFailed(errors.New("tool: no call"))
	}
	if err := apply(req); err != nil {
		return setupFailed(err)
	}
	var opts []tools.Option
	if req.Lines > 0 {
		opts = append(opts, tools.WithOutputLimit(req.Lines, req.Bytes))
	}
	var resp response
	set, err := tools.New(req.Workspace, opts...)
	if err == nil {
		defer func() { _ = set.Close() }() // a directory handle
		t, ok := set.Get(req.Tool)
		if !ok {
			err = fmt.Errorf("no built-in tool %q", req.Tool)
		} else {
			call := *req.Call
			call.Workspace = ""
			var res tool.Result
			if res, err = t.Execute(context.Background(), call, nil); err == nil {
				resp.Result = &res
			}
		}
	}
	if err != nil {
		resp.Error = err.Error()
		switch {
		case errors.Is(err, tools.ErrOutside):
			resp.Kind = kindOutside
		case errors.Is(err, events.ErrInvalid):
			resp.Kind = kindInvalid
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		return setupFailed(fmt.Errorf("write the result: %w", err))
	}
	return 0
}

// childProbe applies what req asks and reports what it found.
func childProbe(req request) int {
	abi, _ := llsys.LandlockGetABIVersion() // an error means no Landlock: 0
	p := probeReport{LandlockABI: abi}
	if req.Confine.MountProc {
		p.ProcMount = mountPrivate(req) == nil
	}
	b, _ := json.Marshal(p) // plain fields
	if err := json.NewEncoder(os.Stdout).Encode(response{Probe: b}); err != nil {
		return setupFailed(err)
	}
	return 0
}

// probeReport is what the probe child sees from inside its namespaces.
type probeReport struct {
	LandlockABI int  `json:"landlockABI"`
	ProcMount   bool `json:"procMount"`
}

// lookPath finds name in the PATH of env, as bash would be found.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH %s", name, path)
}
