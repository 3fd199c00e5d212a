// Package sandbox confines each built-in tool call (DESIGN §10). The
// toolrunner is never confined itself: for every call it re-executes its own
// binary (/proc/self/exe, argv[0] "cairn-sandbox-child"; internal/child's
// init recognises it, so cairn and any test binary linking the package can
// be the child) in new namespaces; the child confines itself and then runs
// the tool. bash's child execs `bash -c`; the file tools (read, write, edit,
// grep, find, ls) run their Go code inside the child, the call coming in
// with the request and the result going out on a pipe, as a second layer
// under pkg/tools' path checks. Calls take a child started ahead of them
// (two per kind wait, namespaced but not yet confined, blocked reading
// their request on a unix socket; the next starts when a call has ended),
// so the child's start is off the call's path; it confines itself once it
// has the request, as any child does.
//
// # The child's start
//
// Go initialises every package of a binary before main, in a fixed order
// (since Go 1.21: repeatedly the first package in import-path order whose
// imports are all initialised), so a child runs the inits that come before
// the one that takes it over. Measured with GODEBUG=inittrace=1 on a child
// of the cairn binary:
//
//   - bash: internal/child's init reads the request, confines the process
//     and execs bash. It imports only the standard library's early
//     packages, x/sys/unix and go-landlock; it used to import net and
//     os/exec too, whose imports (vendor/golang.org/x/net/dns/dnsmessage,
//     path/filepath) sort last and so let every ready package go first: the
//     child ran after 223 of the binary's 284 inits, now after about 110 (94
//     of 236 in this package's test binary), none of them heavy
//     (TestChildInitComesBeforeHeavyPackages keeps it so). The bridge of
//     allowed hosts, which needs net, is internal/bridge.
//   - file tools: internal/toolchild's init runs the tool, so a child waits
//     for pkg/tools and all it imports, among them pkg/tool's JSON Schema
//     library (github.com/santhosh-tekuri/jsonschema/v6), whose init
//     compiles its meta-schemas: the costliest init of the binary (6-50 ms
//     measured, more than all the others together). Replacing it with
//     github.com/google/jsonschema-go (init under 0.3 ms) would cost the
//     model's error messages (one problem per call, schema paths instead of
//     argument names) and drafts other than 07 and 2020-12, so the file
//     tools' children are pooled instead: a child started ahead
//     (child.ArgWarmTool) has run those inits before it blocks for its
//     request in toolchild's init.
//
// What a call still pays after the pool: the request's hand-over, the
// confinement itself (private /proc and /run mounts, the Landlock ruleset;
// for the file tools Landlock on every thread of the Go runtime), bash's
// exec, and the exit of the call's namespaces; a network namespace's
// teardown is the largest part of that measured. Calls back to back also
// compete for the CPU with the start of the children replacing theirs.
// Figures: docs/security.md, "Tool sandbox cost".
//
// # What a call gets
//
//   - Namespaces (when the kernel allows unprivileged user namespaces):
//     user, mount, PID, IPC, UTS and, unless ports are allowed, network (only
//     a downed loopback). Root maps to root, anyone else to itself. The PID
//     namespace hides every other process; the child mounts a /proc of its
//     own, so /proc/<toolrunner>/environ does not exist for it, and an empty
//     read-only tmpfs over /run (host sockets such as docker.sock).
//   - Landlock (ABI 7 on the machines Cairn runs on; best effort down to the
//     kernel's): the call's workspace and a per-call temp directory (TMPDIR)
//     read-write; /usr, /bin, /lib*, /sbin, /opt, a short list of /etc files
//     (ld.so.cache, localtime, nsswitch.conf, gitconfig, alternatives, ...;
//     not passwd, shadow or hosts) and Policy.ReadOnly read-only; /dev/null,
//     zero, full, random, urandom; /proc only when it is the child's own.
//     TCP (ABI 4): no bind, connect only to Policy.AllowPorts. Scopes (ABI
//     6): no signals to and no abstract sockets of processes outside.
//   - Allowed hosts (Policy.AllowHosts): the call keeps its own network
//     namespace; its child brings up lo, listens on 127.0.0.1:[ProxyPort]
//     and starts a bridge to a proxy in the toolrunner (a unix socket),
//     which lets through CONNECT and absolute-URI HTTP requests to listed
//     host:ports only, resolves names itself and refuses non-public
//     addresses not listed literally. HTTPS_PROXY, HTTP_PROXY and ALL_PROXY
//     name it; Landlock lets the call connect to that port only.
//   - Limits: RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_AS (bash
//     only; the Go file tools are ours), and a process count: a pids cgroup
//     per bash call (pids.max) when the toolrunner runs as root with a
//     writable pids hierarchy (cgroup v2 delegated, else v1), or
//     RLIMIT_NPROC in the call's user namespace otherwise. The file tools
//     start no processes and get no cgroup.
//   - A clean environment: PATH of system directories, HOME and PWD the
//     workspace, TMPDIR, and LANG, LC_ALL, TZ, TERM; nothing else of the
//     toolrunner's (no keys, no NATS credentials, no CAIRN_*).
//
// Not enforced: hosts (a listed port is open on every host), UDP when ports
// are allowed (no network namespace then), Multipath TCP sockets (Landlock
// does not see them), connecting to path-named unix sockets outside /run
// below Landlock ABI 9, and disk use as a whole (RLIMIT_FSIZE bounds each
// file, not their sum).
//
// # Levels
//
// [New] probes the machine ([Probe]) and, at [Required], refuses with
// [ErrUnavailable] naming each missing layer; [BestEffort] logs what is
// missing and applies the rest; [Off] logs a warning and confines nothing.
//
// # Errors
//
// A call that breaks a rule fails as the kernel says (EACCES, EPERM,
// ENETUNREACH, SIGXCPU, SIGXFSZ, EAGAIN on fork): an ordinary result the
// model sees. A child that cannot confine itself exits 125 with "sandbox:"
// and the reason; the call fails, the toolrunner keeps serving.
//
// # Concurrency
//
// A [Sandbox] is safe for concurrent use; each call has its own child, temp
// directory and cgroup, removed when the call ends. A burst of calls beyond
// the children waiting starts the rest on the calls' paths. Close kills the
// children waiting; calls must have ended.
package sandbox
