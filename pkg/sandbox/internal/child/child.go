package child

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"runtime"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// maxRequest bounds what the child reads from its stdin.
const maxRequest = 64 << 20

// ExitSetup is the child's exit code when it could not confine itself.
const ExitSetup = 125

// Pending is the request of a ModeTool child, for internal/toolchild's
// init; nil in every other process.
var Pending *Request

// init runs the child when the binary was started with argv[0] = Arg0: the
// toolrunner re-executes its own binary (/proc/self/exe), cairn or a test
// binary alike, and the child never reaches main or the tests.
func init() {
	if len(os.Args) == 0 || os.Args[0] != Arg0 {
		return
	}
	if len(os.Args) > 1 && (os.Args[1] == ArgBridge || os.Args[1] == ArgWarmTool) {
		return // internal/bridge's or internal/toolchild's init runs it
	}
	warm := len(os.Args) > 1 && os.Args[1] == ArgWarm
	if warm && len(os.Args) > 2 { // the call's cgroup, joined while nothing waits for it
		if err := os.WriteFile(os.Args[2], []byte("0"), 0); err != nil {
			os.Exit(Fail(fmt.Errorf("join cgroup: %w", err)))
		}
	}
	req, err := readRequest(warm)
	if err != nil {
		os.Exit(Fail(err))
	}
	if warm && req.Mode != ModeExec {
		os.Exit(Fail(fmt.Errorf("a child started ahead for bash runs exec requests only, got %q", req.Mode)))
	}
	switch req.Mode {
	case ModeProbe:
		os.Exit(probe(req))
	case ModeExec:
		os.Exit(execArgv(req))
	case ModeTool:
		Pending = &req // internal/toolchild's init runs it
		return
	}
	os.Exit(Fail(fmt.Errorf("unknown mode %q", req.Mode)))
}

// WarmTool reads the request of a child started ahead of a file tool's
// call (argv[1] ArgWarmTool), for internal/toolchild's init once the rest
// of the binary is initialised: ok is false in every other process.
func WarmTool() (req Request, ok bool, err error) {
	if len(os.Args) != 2 || os.Args[0] != Arg0 || os.Args[1] != ArgWarmTool {
		return Request{}, false, nil
	}
	req, err = readRequest(true)
	if err == nil && req.Mode != ModeTool {
		err = fmt.Errorf("a child started ahead for a file tool runs tool requests only, got %q", req.Mode)
	}
	return req, true, err
}

// readRequest reads and decodes the request, from the socket on stdin when
// warm (see receive), then puts /dev/null on stdin.
func readRequest(warm bool) (Request, error) {
	var data []byte
	var err error
	if warm {
		data, err = receive()
	} else {
		data, err = io.ReadAll(io.LimitReader(os.Stdin, maxRequest))
	}
	if err != nil {
		return Request{}, fmt.Errorf("read the request: %w", err)
	}
	var req Request
	if err := json.Unmarshal(data, &req); err != nil {
		return Request{}, fmt.Errorf("decode the request: %w", err)
	}
	if err := nullStdin(); err != nil {
		return Request{}, err
	}
	return req, nil
}

// receive reads a warm child's request from the socket on fd 0: the first
// byte comes with the descriptor that becomes stdout and stderr, the rest
// follows up to the socket's end.
func receive() ([]byte, error) {
	first := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(4))
	n, oobn, _, _, err := syscall.Recvmsg(0, first, oob, syscall.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, errors.New("the socket closed before the request")
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("no output descriptor with the request (%v)", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, fmt.Errorf("no output descriptor with the request (%v)", err)
	}
	for _, to := range []int{1, 2} {
		if err := syscall.Dup3(fds[0], to, 0); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
	}
	_ = syscall.Close(fds[0]) // duplicated onto 1 and 2
	rest, err := io.ReadAll(io.LimitReader(os.Stdin, maxRequest))
	if err != nil {
		return nil, err
	}
	return append(first, rest...), nil
}

// Fail writes err to stderr and returns ExitSetup.
func Fail(err error) int {
	fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
	return ExitSetup
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

// execArgv confines the process and replaces it with Argv, from one OS
// thread: the one Landlock binds (see apply).
func execArgv(req Request) int {
	if len(req.Argv) == 0 {
		return Fail(errors.New("exec: no command"))
	}
	bin, err := lookPath(req.Argv[0], req.Env)
	if err != nil {
		return Fail(err)
	}
	if req.Confine.Proxy != "" {
		if err := startBridge(req.Confine.Proxy, req.Confine.ProxyPort); err != nil {
			return Fail(err)
		}
	}
	runtime.LockOSThread() // never unlocked: the thread execs or the process exits
	if err := apply(req, true); err != nil {
		return Fail(err)
	}
	err = syscall.Exec(bin, req.Argv, req.Env)
	return Fail(fmt.Errorf("exec %s: %w", bin, err))
}

// ProbeReport is what the probe child sees from inside its namespaces.
type ProbeReport struct {
	LandlockABI int  `json:"landlockABI"`
	ProcMount   bool `json:"procMount"`
}

// probe applies what req asks and reports what it found.
func probe(req Request) int {
	abi, _ := llsys.LandlockGetABIVersion() // an error means no Landlock: 0
	p := ProbeReport{LandlockABI: abi}
	if req.Confine.MountProc {
		p.ProcMount = mountPrivate(req) == nil
	}
	b, _ := json.Marshal(p) // plain fields
	if err := json.NewEncoder(os.Stdout).Encode(Response{Probe: b}); err != nil {
		return Fail(err)
	}
	return 0
}

// lookPath finds name in the PATH of env, as bash would be found.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	dirs := DefaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			dirs = v
		}
	}
	for _, dir := range strings.Split(dirs, ":") {
		if dir == "" {
			dir = "."
		}
		p := path.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in PATH %s", name, dirs)
}
