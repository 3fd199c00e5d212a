package child

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ArgBridge, as argv[1], makes the bridge of a call with allowed hosts: fd
// 3 is a listening TCP socket on the call's loopback, argv[2] the path of
// the toolrunner's proxy socket; each connection accepted is forwarded to
// a new connection to that socket. The bridge lives in the call's
// namespaces and ends with them.
const ArgBridge = "bridge"

// startBridge brings up lo in the child's network namespace, listens on
// 127.0.0.1:port there (before Landlock, which refuses every bind) and
// starts the bridge process with the listener.
func startBridge(sock string, port int) error {
	if err := loUp(); err != nil {
		return fmt.Errorf("proxy bridge: bring up lo: %w", err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("proxy bridge: socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), "proxy-listener")
	defer func() { _ = f.Close() }() // the bridge has its copy
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return fmt.Errorf("proxy bridge: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("proxy bridge: bind 127.0.0.1:%d: %w", port, err)
	}
	if err := syscall.Listen(fd, 128); err != nil {
		return fmt.Errorf("proxy bridge: listen: %w", err)
	}
	// os.StartProcess, not os/exec: os/exec imports path/filepath, which
	// sorts late in the init order (see the package doc).
	null, err := os.Open(os.DevNull)
	if err != nil {
		return fmt.Errorf("proxy bridge: %w", err)
	}
	defer func() { _ = null.Close() }()
	p, err := os.StartProcess("/proc/self/exe", []string{Arg0, ArgBridge, sock},
		&os.ProcAttr{Dir: "/", Env: []string{}, Files: []*os.File{null, null, null, f}})
	if err != nil {
		return fmt.Errorf("proxy bridge: start: %w", err)
	}
	// Not waited for: the bridge ends with the call's PID namespace, whose
	// init (the call's command) this process becomes.
	_ = p.Release()
	return nil
}

// loUp sets IFF_UP on lo.
func loUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }()
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCGIFFLAGS: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCSIFFLAGS: %w", err)
	}
	return nil
}
