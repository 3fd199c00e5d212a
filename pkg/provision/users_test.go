package provision_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-agents/cairn/internal/kittest"
	"github.com/cairn-agents/cairn/pkg/embednats"
	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// authServer is an embedded server that requires the users of every role,
// provisioned by the admin, with one session entry in the log.
type authServer struct {
	srv   *embednats.Server
	creds map[string]provision.Credential // by user name
	admin jetstream.JetStream
}

func startAuthServer(t *testing.T) *authServer {
	t.Helper()
	n := events.Names{}
	users, err := provision.Users(n, []string{"default", "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := provision.EnsureCredentials(filepath.Join(t.TempDir(), "creds"), users)
	if err != nil {
		t.Fatal(err)
	}
	a := &authServer{creds: map[string]provision.Credential{}}
	var eu []embednats.User
	for _, c := range creds {
		a.creds[c.User.Name()] = c
		eu = append(eu, embednats.User{Name: c.User.Name(), Nkey: c.PublicKey, Publish: c.User.Permissions.Publish,
			Subscribe: c.User.Permissions.Subscribe, Responses: c.User.Permissions.Responses})
	}
	a.srv, err = embednats.Start(embednats.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Users: eu})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.srv.Shutdown)
	nc, _ := a.connect(t, "admin")
	a.admin, _ = jetstream.New(nc)
	ctx := context.Background()
	if _, err := provision.Apply(ctx, a.admin, n, provision.Options{Pools: []string{"default", "gpu"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.admin.Publish(ctx, n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	return a
}

// violations records the permission violations the server reports to a
// connection.
type violations struct {
	mu   sync.Mutex
	errs []string
}

func (v *violations) has(subject string) func() error {
	return func() error {
		v.mu.Lock()
		defer v.mu.Unlock()
		for _, e := range v.errs {
			if strings.Contains(e, subject) {
				return nil
			}
		}
		return errors.New("no permissions violation for " + subject + " yet; got " + strings.Join(v.errs, "; "))
	}
}

// connect connects over TCP as user name.
func (a *authServer) connect(t *testing.T, name string) (*nats.Conn, *violations) {
	t.Helper()
	opts, err := a.creds[name].Options()
	if err != nil {
		t.Fatal(err)
	}
	v := &violations{}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			v.mu.Lock()
			v.errs = append(v.errs, err.Error())
			v.mu.Unlock()
		}
	}))
	nc, err := nats.Connect(a.srv.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("connect as %s: %v", name, err)
	}
	t.Cleanup(nc.Close)
	return nc, v
}

func (a *authServer) messages(t *testing.T, stream, subject string) uint64 {
	t.Helper()
	s, err := a.admin.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background(), jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

func TestNATSRefusesConnectionsWithoutValidCredentials(t *testing.T) {
	a := startAuthServer(t)
	if nc, err := nats.Connect(a.srv.ClientURL()); err == nil {
		nc.Close()
		t.Fatal("a connection without credentials was accepted")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("no credentials: %v, want an authorization violation", err)
	}
	// A well-formed seed the server does not know.
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	stranger := filepath.Join(t.TempDir(), "stranger.nk")
	if err := os.WriteFile(stranger, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	nk, err := nats.NkeyOptionFromSeed(stranger)
	if err != nil {
		t.Fatal(err)
	}
	if nc, err := nats.Connect(a.srv.ClientURL(), nk); err == nil {
		nc.Close()
		t.Fatal("a connection with an unknown nkey was accepted")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("unknown nkey: %v, want an authorization violation", err)
	}
	// A known public key signed with another seed: the same refusal.
	pub := a.creds["toolrunner-default"].PublicKey
	forged := nats.Nkey(pub, func(nonce []byte) ([]byte, error) { return kp.Sign(nonce) })
	if nc, err := nats.Connect(a.srv.ClientURL(), forged); err == nil {
		nc.Close()
		t.Fatal("a connection claiming the toolrunner's key with another seed was accepted")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("forged signature: %v, want an authorization violation", err)
	}
}

// TestNATSPermissionsRefuseWhatARoleMayNot is an attacker's table: each
// row is a user trying what its service never needs; the server must
// refuse it and nothing may land.
func TestNATSPermissionsRefuseWhatARoleMayNot(t *testing.T) {
	a := startAuthServer(t)
	n := events.Names{}
	type attempt struct {
		user, what string
		subject    string // published (a request, if reply)
		reply      bool
		stream     string // where nothing may land (or nothing may go)
		filter     string
	}
	for _, at := range []attempt{
		{"toolrunner-default", "append a session entry", n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.SessionsStream(), n.AllSessions()},
		{"toolrunner-default", "publish a command", n.CommandSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.CommandsStream(), ">"},
		{"toolrunner-default", "queue a tool call", n.ToolSubject("default", events.DefaultTenant, "bash"), false, n.ToolsStream(), n.AllTools()},
		{"toolrunner-default", "purge the session log", "$JS.API.STREAM.PURGE." + n.SessionsStream(), true, n.SessionsStream(), n.AllSessions()},
		{"toolrunner-default", "delete a session entry", "$JS.API.STREAM.MSG.DELETE." + n.SessionsStream(), true, n.SessionsStream(), n.AllSessions()},
		{"toolrunner-default", "delete the session log", "$JS.API.STREAM.DELETE." + n.SessionsStream(), true, n.SessionsStream(), n.AllSessions()},
		{"toolrunner-default", "read the session log", "$JS.API.DIRECT.GET." + n.SessionsStream() + "." + n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), true, "", ""},
		{"toolrunner-default", "pull another pool's calls", "$JS.API.CONSUMER.MSG.NEXT." + n.ToolsStream() + ".toolrunner_gpu", true, "", ""},
		{"toolrunner-default", "retarget its consumer", "$JS.API.CONSUMER.CREATE." + n.ToolsStream() + ".toolrunner_default." + n.AllTools(), true, "", ""},
		{"toolrunner-default", "purge its work queue", "$JS.API.STREAM.PURGE." + n.ToolsStream(), true, "", ""},
		{"gateway", "append a session entry", n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.SessionsStream(), n.AllSessions()},
		{"gateway", "queue a tool call", n.ToolSubject("default", events.DefaultTenant, "bash"), false, n.ToolsStream(), n.AllTools()},
		{"gateway", "forge a tool result", n.ResultSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.ResultsStream(), n.AllResults()},
		{"gateway", "purge the session log", "$JS.API.STREAM.PURGE." + n.SessionsStream(), true, n.SessionsStream(), n.AllSessions()},
		{"projector", "append a session entry", n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.SessionsStream(), n.AllSessions()},
		{"projector", "publish a command", n.CommandSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.CommandsStream(), ">"},
		{"compactor", "append a session entry", n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.SessionsStream(), n.AllSessions()},
		{"compactor", "publish a command", n.CommandSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.CommandsStream(), ">"},
		{"orchestrator", "purge the session log", "$JS.API.STREAM.PURGE." + n.SessionsStream(), true, n.SessionsStream(), n.AllSessions()},
		{"orchestrator", "delete a session entry", "$JS.API.STREAM.MSG.DELETE." + n.SessionsStream(), true, n.SessionsStream(), n.AllSessions()},
		{"extension", "append a session entry", n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.SessionsStream(), n.AllSessions()},
		{"extension", "publish a command", n.CommandSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.CommandsStream(), ">"},
		{"extension", "forge a tool result", n.ResultSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), false, n.ResultsStream(), n.AllResults()},
		{"extension", "read the session log", "$JS.API.DIRECT.GET." + n.SessionsStream() + "." + n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s1"}), true, "", ""},
		{"extension", "call another extension's handler", n.ExtensionCallSubject("policy"), true, "", ""},
		{"extension", "publish into the orchestrator's inbox", "_INBOX_orchestrator.forged", false, "", ""},
	} {
		t.Run(at.user+" may not "+at.what, func(t *testing.T) {
			var before uint64
			if at.stream != "" {
				before = a.messages(t, at.stream, at.filter)
			}
			nc, v := a.connect(t, at.user)
			if at.reply {
				_, err := nc.Request(at.subject, []byte(`{"seq":1}`), 500*time.Millisecond)
				if err == nil {
					t.Fatalf("%s answered", at.subject)
				}
			} else if err := nc.Publish(at.subject, []byte(`{"type":"forged"}`)); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			kittest.Eventually(t, 5*time.Second, "the server refuses "+at.subject, v.has(at.subject))
			if at.stream != "" {
				if after := a.messages(t, at.stream, at.filter); after != before {
					t.Fatalf("%s: %d messages on %s, %d before: the attempt changed the stream", at.stream, after, at.filter, before)
				}
			}
		})
	}
	t.Run("extension may not subscribe to the log, events or another's inbox", func(t *testing.T) {
		nc, v := a.connect(t, "extension")
		for _, subj := range []string{n.AllSessions(), n.AllEvents(), "_INBOX_orchestrator.>", ">"} {
			if _, err := nc.SubscribeSync(subj); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			kittest.Eventually(t, 5*time.Second, "the server refuses a subscription to "+subj, v.has(subj))
		}
	})
	t.Run("toolrunner may not subscribe to the log or another's inbox", func(t *testing.T) {
		nc, v := a.connect(t, "toolrunner-default")
		for _, subj := range []string{n.AllSessions(), n.AllCommands(), "_INBOX_orchestrator.>", "_INBOX.>", ">"} {
			if _, err := nc.SubscribeSync(subj); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			kittest.Eventually(t, 5*time.Second, "the server refuses a subscription to "+subj, v.has(subj))
		}
	})
}

func TestNATSPermissionsLetEachRoleDoItsWork(t *testing.T) {
	a := startAuthServer(t)
	n := events.Names{}
	ctx := context.Background()
	orch, ov := a.connect(t, "orchestrator")
	ojs, _ := jetstream.New(orch)
	if _, err := ojs.Publish(ctx, n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s2"}), []byte(`{}`)); err != nil {
		t.Fatalf("orchestrator appends a session entry: %v", err)
	}
	if _, err := ojs.Publish(ctx, n.ToolSubject("default", events.DefaultTenant, "bash"), []byte(`{}`)); err != nil {
		t.Fatalf("orchestrator queues a tool call: %v", err)
	}
	tr, tv := a.connect(t, "toolrunner-default")
	tjs, _ := jetstream.New(tr)
	cons, err := tjs.Consumer(ctx, n.ToolsStream(), "toolrunner_default")
	if err != nil {
		t.Fatalf("toolrunner looks up its consumer: %v", err)
	}
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for m := range batch.Messages() {
		got++
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatalf("toolrunner acks its call: %v", err)
		}
	}
	if got != 1 || batch.Error() != nil {
		t.Fatalf("toolrunner pulled %d calls (%v), want 1", got, batch.Error())
	}
	if _, err := tjs.Publish(ctx, n.ResultSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s2"}), []byte(`{}`)); err != nil {
		t.Fatalf("toolrunner publishes a result: %v", err)
	}
	kv, err := tjs.KeyValue(ctx, n.ToolStartsBucket())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "s2.call1", []byte("w")); err != nil {
		t.Fatalf("toolrunner records a start: %v", err)
	}
	if _, err := kv.Get(ctx, "s2.call1"); err != nil {
		t.Fatalf("toolrunner reads a start: %v", err)
	}
	gw, gv := a.connect(t, "gateway")
	gjs, _ := jetstream.New(gw)
	if _, err := gjs.Publish(ctx, n.CommandSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s2"}), []byte(`{}`)); err != nil {
		t.Fatalf("gateway publishes a command: %v", err)
	}
	s, err := gjs.Stream(ctx, n.SessionsStream())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetLastMsgForSubject(ctx, n.SessionSubject(events.SessionRef{Tenant: events.DefaultTenant, ID: "s2"})); err != nil {
		t.Fatalf("gateway reads the log: %v", err)
	}
	// An extension registers a handler the orchestrator reads, and answers
	// the orchestrator's request in its inbox (allow_responses).
	ext, ev := a.connect(t, "extension")
	ejs, _ := jetstream.New(ext)
	ekv, err := ejs.KeyValue(ctx, n.ExtensionsBucket())
	if err != nil {
		t.Fatalf("extension opens the extensions bucket: %v", err)
	}
	if _, err := ekv.Put(ctx, "policy", []byte(`{"handler":"policy","hook":"tool_call"}`)); err != nil {
		t.Fatalf("extension registers a handler: %v", err)
	}
	okv, err := ojs.KeyValue(ctx, n.ExtensionsBucket())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := okv.Get(ctx, "policy"); err != nil {
		t.Fatalf("orchestrator reads the registration: %v", err)
	}
	if _, err := ext.Subscribe(n.ExtensionCallSubject("policy"), func(m *nats.Msg) { _ = m.Respond([]byte(`{"block":true}`)) }); err != nil {
		t.Fatal(err)
	}
	if err := ext.Flush(); err != nil {
		t.Fatal(err)
	}
	if reply, err := orch.Request(n.ExtensionCallSubject("policy"), []byte(`{}`), 5*time.Second); err != nil || string(reply.Data) != `{"block":true}` {
		t.Fatalf("orchestrator calls the extension: %v", err)
	}
	for name, v := range map[string]*violations{"orchestrator": ov, "toolrunner": tv, "gateway": gv, "extension": ev} {
		if len(v.errs) > 0 {
			t.Errorf("%s: permission violations doing its work: %v", name, v.errs)
		}
	}
}

// TestAuthorizationConfigIsWhatTheServerLoads checks that the block
// `cairn provision users` prints parses as nats-server configuration and
// gives each user exactly its permissions.
func TestAuthorizationConfigIsWhatTheServerLoads(t *testing.T) {
	users, err := provision.Users(events.Names{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := provision.EnsureCredentials(filepath.Join(t.TempDir(), "c"), users)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("port: -1\n"+provision.AuthorizationConfig(creds)), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("the authorization block does not parse: %v", err)
	}
	if len(opts.Nkeys) != len(creds) {
		t.Fatalf("%d nkey users loaded, want %d", len(opts.Nkeys), len(creds))
	}
	for i, c := range creds {
		nu := opts.Nkeys[i]
		if nu.Nkey != c.PublicKey {
			t.Fatalf("user %d: key %s, want %s", i, nu.Nkey, c.PublicKey)
		}
		if c.User.Role == provision.RoleAdmin {
			if nu.Permissions != nil {
				t.Fatalf("admin has permissions %+v, want none (everything)", nu.Permissions)
			}
			continue
		}
		if nu.Permissions == nil || strings.Join(nu.Permissions.Publish.Allow, " ") != strings.Join(c.User.Permissions.Publish, " ") ||
			strings.Join(nu.Permissions.Subscribe.Allow, " ") != strings.Join(c.User.Permissions.Subscribe, " ") {
			t.Fatalf("%s: loaded %+v, want %+v", c.User.Name(), nu.Permissions, c.User.Permissions)
		}
	}
}

func TestCredentialsFilesAreOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	users, _ := provision.Users(events.Names{}, nil)
	creds, err := provision.EnsureCredentials(dir, users)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("credentials directory mode %04o, want 0700", fi.Mode().Perm())
	}
	for _, c := range creds {
		fi, err := os.Stat(c.SeedFile)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v (%v), want 0600", c.SeedFile, fi.Mode().Perm(), err)
		}
	}
	// Again: the same keys, nothing rewritten.
	again, err := provision.EnsureCredentials(dir, users)
	if err != nil {
		t.Fatal(err)
	}
	for i := range creds {
		if again[i].PublicKey != creds[i].PublicKey {
			t.Fatalf("%s: a second run changed the key", creds[i].User.Name())
		}
	}
	// A seed others may read is refused, naming the file, not the seed.
	if err := os.Chmod(creds[1].SeedFile, 0o644); err != nil {
		t.Fatal(err)
	}
	seed, _ := os.ReadFile(creds[1].SeedFile)
	_, err = provision.EnsureCredentials(dir, users)
	if err == nil || !strings.Contains(err.Error(), creds[1].SeedFile) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable seed: %v, want a refusal naming the file", err)
	}
	if strings.Contains(err.Error(), strings.TrimSpace(string(seed))) {
		t.Fatal("the error shows the seed")
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := provision.EnsureCredentials(dir, users); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("a readable directory: %v, want a refusal", err)
	}
	// Garbage in a seed file.
	junk := filepath.Join(t.TempDir(), "junk.nk")
	if err := os.WriteFile(junk, []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := provision.ReadSeedFile(junk); err == nil || !strings.Contains(err.Error(), "holds no nkey user seed") {
		t.Fatalf("junk seed: %v", err)
	}
}

// TestCredentialsRotate follows docs/operations.md: move the seed aside
// as <name>.nk.old, provision again (a new key; the servers accept both),
// roll the services, remove the old file (only the new key is accepted).
func TestCredentialsRotate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	users, _ := provision.Users(events.Names{}, nil)
	start := func(creds []provision.Credential) *embednats.Server {
		var eu []embednats.User
		for _, c := range creds {
			eu = append(eu, embednats.User{Name: c.User.Name(), Nkey: c.PublicKey, Publish: c.User.Permissions.Publish,
				Subscribe: c.User.Permissions.Subscribe, Responses: c.User.Permissions.Responses})
		}
		s, err := embednats.Start(embednats.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Users: eu})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Shutdown)
		return s
	}
	canConnect := func(s *embednats.Server, seed string) error {
		nk, err := nats.NkeyOptionFromSeed(seed)
		if err != nil {
			t.Fatal(err)
		}
		nc, err := nats.Connect(s.ClientURL(), nk)
		if err == nil {
			nc.Close()
		}
		return err
	}
	first, err := provision.EnsureCredentials(dir, users)
	if err != nil {
		t.Fatal(err)
	}
	var gw provision.Credential
	for _, c := range first {
		if c.User.Role == provision.RoleGateway {
			gw = c
		}
	}
	if err := os.Rename(gw.SeedFile, gw.SeedFile+".old"); err != nil {
		t.Fatal(err)
	}
	during, err := provision.EnsureCredentials(dir, users)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range during {
		if c.User.Name() == "gateway" {
			keys = append(keys, c.PublicKey)
		}
	}
	if len(keys) != 2 || keys[0] == keys[1] || keys[1] != gw.PublicKey {
		t.Fatalf("during the rotation the gateway has keys %v, want a new one and the old %s", keys, gw.PublicKey)
	}
	if !strings.Contains(provision.AuthorizationConfig(during), "retiring") {
		t.Fatal("the block does not mark the retiring key")
	}
	s := start(during)
	if err := canConnect(s, gw.SeedFile); err != nil {
		t.Fatalf("the new key: %v", err)
	}
	if err := canConnect(s, gw.SeedFile+".old"); err != nil {
		t.Fatalf("the old key while rolling: %v", err)
	}
	old, _ := os.ReadFile(gw.SeedFile + ".old")
	keep := filepath.Join(t.TempDir(), "old.nk")
	if err := os.WriteFile(keep, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(gw.SeedFile + ".old"); err != nil {
		t.Fatal(err)
	}
	after, err := provision.EnsureCredentials(dir, users)
	if err != nil {
		t.Fatal(err)
	}
	s2 := start(after)
	if err := canConnect(s2, gw.SeedFile); err != nil {
		t.Fatalf("the new key after: %v", err)
	}
	if err := canConnect(s2, keep); !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("the removed key: %v, want refused", err)
	}
}
