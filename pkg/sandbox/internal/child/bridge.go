package child

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
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
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{Arg0, ArgBridge, sock}
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("proxy bridge: start: %w", err)
	}
	// Not waited for: the bridge ends with the call's PID namespace, whose
	// init (the call's command) this process becomes.
	_ = cmd.Process.Release()
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

// runBridge is the bridge process: it forwards every connection on fd 3
// to the proxy socket until the listener fails.
func runBridge(sock string) int {
	ln, err := net.FileListener(os.NewFile(3, "proxy-listener"))
	if err != nil {
		return Fail(fmt.Errorf("proxy bridge: %w", err))
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return Fail(fmt.Errorf("proxy bridge: accept: %w", err))
		}
		go forward(c, sock)
	}
}

func forward(c net.Conn, sock string) {
	defer func() { _ = c.Close() }()
	up, err := net.Dial("unix", sock)
	if err != nil {
		return
	}
	defer func() { _ = up.Close() }()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, c)
		_ = up.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	_, _ = io.Copy(c, up)
	_ = c.(*net.TCPConn).CloseWrite()
	<-done
}
