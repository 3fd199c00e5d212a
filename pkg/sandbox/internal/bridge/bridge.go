// Package bridge is the allowed-hosts bridge process of a sandboxed call
// (see internal/child's startBridge): started from this binary with argv
// [child.Arg0, child.ArgBridge, proxy socket] and a listening TCP socket on
// fd 3, its init forwards every connection accepted to a new connection to
// the toolrunner's proxy socket, and never returns.
//
// It is a package of its own because it needs net, and net's imports
// (vendor/golang.org/x/net/dns/dnsmessage among them) sort last in Go's
// package initialisation order: imported by internal/child, net held the
// child's init back until some 220 other packages had been initialised.
// The bridge's own start is off the call's path (the listener is bound
// before the call's command starts; connections wait in its backlog).
package bridge

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/cairn-agents/cairn/pkg/sandbox/internal/child"
)

func init() {
	if len(os.Args) == 3 && os.Args[0] == child.Arg0 && os.Args[1] == child.ArgBridge {
		os.Exit(run(os.Args[2]))
	}
}

// run forwards every connection on fd 3 to the proxy socket until the
// listener fails.
func run(sock string) int {
	ln, err := net.FileListener(os.NewFile(3, "proxy-listener"))
	if err != nil {
		return child.Fail(fmt.Errorf("proxy bridge: %w", err))
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return child.Fail(fmt.Errorf("proxy bridge: accept: %w", err))
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
