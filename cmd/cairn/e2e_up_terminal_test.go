package main

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// `cairn up` on a terminal (issue 29): a banner with the API, the console,
// the admin key file and the NATS credentials, and human-readable log
// lines, no JSON; the partitions summed up in one line.
func TestUpTerminalPrintsTheBannerAndNoJSON(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(cairnBinary(t), "up", "--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0",
		"--nats-listen", "127.0.0.1:0")
	tty, err := pty.Start(cmd) // stdin, stdout and stderr on the terminal
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tty.Close() }()
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(tty)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	deadline := time.After(60 * time.Second)
	need := map[string]bool{"API ": false, "console ": false, "admin key ": false, "NATS credentials ": false, "partitions acquired": false}
	done := func() bool {
		for _, ok := range need {
			if !ok {
				return false
			}
		}
		return true
	}
	for !done() {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("cairn up closed its terminal:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			for k := range need {
				if strings.Contains(l, k) {
					need[k] = true
				}
			}
		case <-deadline:
			t.Fatalf("no banner and summary within 60s (%v):\n%s", need, strings.Join(seen, "\n"))
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for l := range lines {
		seen = append(seen, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("cairn up exited with %v", err)
	}
	partitionLines := 0
	for _, l := range seen {
		if strings.HasPrefix(strings.TrimSpace(l), "{") {
			t.Errorf("a JSON line on the terminal: %s", l)
		}
		if strings.Contains(l, `msg="partition acquired"`) {
			partitionLines++
		}
	}
	if partitionLines != 0 {
		t.Errorf("%d per-partition lines at info on the terminal", partitionLines)
	}
	if !strings.Contains(strings.Join(seen, "\n"), "level=INFO") {
		t.Errorf("no text log lines:\n%s", strings.Join(seen, "\n"))
	}
}

// Not on a terminal (a pipe), or with --log-format json, the logs are JSON
// lines; a format that is neither is a usage error.
func TestUpNotATerminalLogsJSON(t *testing.T) {
	if code, _, stderr := runCairn(t, "up", "--log-format", "yaml"); code != 2 || !strings.Contains(stderr, "--log-format") {
		t.Fatalf("--log-format yaml: exit %d %s", code, stderr)
	}
	dir := t.TempDir()
	cmd := exec.Command(cairnBinary(t), "up", "--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0",
		"--nats-listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var summary string
	for sc.Scan() {
		l := sc.Text()
		if !json.Valid([]byte(l)) {
			t.Errorf("a log line that is not JSON: %s", l)
		}
		if strings.Contains(l, `"msg":"partitions acquired"`) {
			summary = l
			break
		}
	}
	// Up and serving before it is stopped: its last line is then a log line.
	if up, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.HasPrefix(up, "cairn is up") {
		t.Fatalf("first stdout line %q: %v", up, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		if l := sc.Text(); !json.Valid([]byte(l)) {
			t.Errorf("a log line that is not JSON: %s", l)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("cairn up exited with %v", err)
	}
	if !strings.Contains(summary, `"n":32`) {
		t.Fatalf("the partitions summary: %q", summary)
	}
}
