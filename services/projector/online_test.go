package projector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairn-agents/cairn/services/projector/internal/synth"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// reader asks the projector's queries again and again from its own
// goroutine and checks every answer against the first one it got (the log
// does not change while it reads).
type reader struct {
	answers atomic.Int64
	stop    chan struct{}
	done    chan error
}

func startReader(t testing.TB, h http.Handler, paths ...string) *reader {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	get := func(path string) (string, error) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", err
		}
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("%s: status %d: %s", path, resp.StatusCode, b)
		}
		return string(b), nil
	}
	want := map[string]string{}
	for _, p := range paths {
		b, err := get(p)
		if err != nil {
			t.Fatal(err)
		}
		want[p] = b
	}
	r := &reader{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for {
			for _, p := range paths {
				select {
				case <-r.stop:
					r.done <- nil
					return
				default:
				}
				got, err := get(p)
				if err == nil && got != want[p] {
					err = fmt.Errorf("%s answered\n%s\nwas\n%s", p, got, want[p])
				}
				if err != nil {
					r.done <- err
					return
				}
				r.answers.Add(1)
			}
		}
	}()
	return r
}

// finish stops the reader and fails the test if an answer was wrong.
func (r *reader) finish(t testing.TB) {
	t.Helper()
	close(r.stop)
	if err := <-r.done; err != nil {
		t.Fatalf("a query during the rebuild: %v", err)
	}
}

// hold stops the online rebuild at its first commit until released.
type hold struct {
	once    sync.Once
	reached chan struct{}
	release chan struct{}
}

func newHold() *hold { return &hold{reached: make(chan struct{}), release: make(chan struct{})} }

func (h *hold) onCommit(Commit) {
	h.once.Do(func() {
		close(h.reached)
		<-h.release
	})
}

func rebuildDone(t testing.TB, p *Projector) RebuildStatus {
	t.Helper()
	var st RebuildStatus
	waitFor(t, "the online rebuild to end", func() bool {
		st = p.RebuildStatus()
		return !st.Running()
	})
	if st.State != RebuildDone {
		t.Fatalf("online rebuild ended %+v", st)
	}
	return st
}

// An online rebuild fills a fresh database while queries are answered from
// the live one, switches over, and holds exactly what the live one held;
// the projector goes on applying new entries to the rebuilt database.
func TestOnlineRebuildSwitchesOverWhileQueriesGoOn(t *testing.T) {
	_, js := sessionsStream(t)
	log := synth.Log(31, 40, 3000)
	first := publish(t, js, log[:2000])
	h := newHold()
	dir := filepath.Join(t.TempDir(), "projector")
	r := start(t, Config{JetStream: js, Dir: dir, onlineBatch: 300, onRebuildCommit: h.onCommit})
	waitFor(t, "2000 applied", func() bool { return r.Applied() == first })

	before, err := r.LiveDigest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sid := strings.TrimPrefix(log[0].Subject, "cairn.session.default.")
	rd := startReader(t, r.Handler(), "/v1/sessions?limit=5", "/v1/sessions/"+sid, "/v1/sessions/"+sid+"/tree",
		"/v1/usage", "/v1/audit/tool-calls?limit=3")

	st, err := r.StartRebuild(context.Background())
	if err != nil || st.State != RebuildRebuilding {
		t.Fatalf("StartRebuild: %+v, %v", st, err)
	}
	<-h.reached // the fresh database holds its first batch, not more
	if _, err := r.StartRebuild(context.Background()); !errors.Is(err, ErrRebuildRunning) {
		t.Fatalf("a second StartRebuild: %v, want ErrRebuildRunning", err)
	}
	st = r.RebuildStatus()
	if st.State != RebuildRebuilding || st.Target != first || st.Applied >= first || st.Remaining == 0 || st.LiveApplied != first {
		t.Fatalf("status mid-rebuild: %+v", st)
	}
	if !r.dirs.exists(r.dirs.next) {
		t.Fatal("no database beside the live one mid-rebuild")
	}
	n := rd.answers.Load()
	waitFor(t, "queries answered mid-rebuild", func() bool { return rd.answers.Load() >= n+20 })
	close(h.release)
	st = rebuildDone(t, r.Projector)
	if st.Applied != first || st.Remaining != 0 || st.EntriesPerSecond <= 0 {
		t.Fatalf("status after the switch-over: %+v", st)
	}
	n = rd.answers.Load()
	waitFor(t, "queries answered after the switch-over", func() bool { return rd.answers.Load() >= n+20 })
	rd.finish(t)

	after, err := r.LiveDigest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("digest after the online rebuild %+v, before %+v", after, before)
	}
	if r.dirs.exists(r.dirs.next) || r.dirs.exists(r.dirs.old) {
		t.Fatalf("%s or %s is left", r.dirs.next, r.dirs.old)
	}
	last := publish(t, js, log[2000:])
	waitFor(t, "the rest applied to the rebuilt database", func() bool { return r.Applied() == last })
	if live, rb := liveDigest(t, r.Projector), rebuildDigest(t, js, 0); live != rb {
		t.Fatalf("after the switch-over the live database %+v differs from a rebuild %+v", live, rb)
	}
	r.stop(t)
	r = start(t, Config{JetStream: js, Dir: dir}) // the rebuilt database is at Dir
	if r.Applied() != last {
		t.Fatalf("reopened at sequence %d, want %d", r.Applied(), last)
	}
	r.stop(t)
}

// Entries that keep arriving during the rebuild are caught up before the
// switch-over: the live database after it equals a rebuild of the whole log.
func TestOnlineRebuildWhileTheLogGrows(t *testing.T) {
	_, js := sessionsStream(t)
	log := synth.Log(32, 50, 6000)
	publish(t, js, log[:2000])
	r := start(t, Config{JetStream: js, Dir: filepath.Join(t.TempDir(), "p"), BatchSize: 32, onlineBatch: 250})
	waitFor(t, "2000 applied", func() bool { return r.Applied() == 2000 })
	if _, err := r.StartRebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := 2000; i < len(log); i += 500 {
		last = publish(t, js, log[i:i+500])
	}
	st := rebuildDone(t, r.Projector)
	if st.Target < 2000 || st.Applied < st.Target {
		t.Fatalf("status: %+v", st)
	}
	waitFor(t, "all applied", func() bool { return r.Applied() == last })
	if live, rb := liveDigest(t, r.Projector), rebuildDigest(t, js, 0); live != rb {
		t.Fatalf("live %+v, rebuild %+v", live, rb)
	}
	r.stop(t)
}

// A crash in the middle of an online rebuild leaves the live database in
// use; the partial one is discarded when the projector starts again.
func TestCrashMidRebuildKeepsTheLiveDatabase(t *testing.T) {
	_, js := sessionsStream(t)
	last := publish(t, js, synth.Log(33, 30, 2500))
	fs := crashableData(t)
	h := newHold()
	cfg := Config{JetStream: js, Dir: "/data/projector", FS: fs, onlineBatch: 200, onRebuildCommit: h.onCommit}
	r := start(t, cfg)
	waitFor(t, "all applied", func() bool { return r.Applied() == last })
	if err := r.live.current().Flush(); err != nil { // what a crash keeps of the live database: all of it
		t.Fatal(err)
	}
	want := liveDigest(t, r.Projector)
	if _, err := r.StartRebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-h.reached
	crashed := []*vfs.MemFS{
		fs.CrashClone(vfs.CrashCloneCfg{}),
		fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(1, 2))}),
	}
	close(h.release)
	rebuildDone(t, r.Projector)
	r.stop(t)

	for i, cfs := range crashed {
		if _, err := cfs.Stat("/data/projector.rebuild"); err != nil {
			t.Fatalf("clone %d: the crash left no partial rebuild to discard: %v", i, err)
		}
		c := cfg
		c.FS, c.onRebuildCommit = cfs, nil
		p, err := New(c)
		if err != nil {
			t.Fatalf("clone %d: %v", i, err)
		}
		if _, err := cfs.Stat("/data/projector.rebuild"); err == nil {
			t.Errorf("clone %d: the partial rebuild was not discarded", i)
		}
		if got := liveDigest(t, p); got != want {
			t.Errorf("clone %d: live database %+v after the crash, want %+v", i, got, want)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A crash at any step of the switch-over leaves one complete database at
// Dir at the next start, the old or the rebuilt one, which hold the same;
// nothing else is left.
func TestCrashDuringSwitchOver(t *testing.T) {
	_, js := sessionsStream(t)
	last := publish(t, js, synth.Log(34, 20, 1500))
	fs := crashableData(t)
	crashed := map[string]*vfs.MemFS{} // written on Run's goroutine, read after Run has returned
	cfg := Config{JetStream: js, Dir: "/data/projector", FS: fs,
		switchStep: func(step string) { crashed[step] = fs.CrashClone(vfs.CrashCloneCfg{}) }}
	r := start(t, cfg)
	waitFor(t, "all applied", func() bool { return r.Applied() == last })
	if err := r.live.current().Flush(); err != nil {
		t.Fatal(err)
	}
	want := liveDigest(t, r.Projector)
	if _, err := r.StartRebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	rebuildDone(t, r.Projector)
	r.stop(t)
	steps := []string{"caught-up", "closed-rebuilt", "closed-live", "renamed-live", "swapped", "opened"}
	for _, step := range steps {
		cfs := crashed[step]
		if cfs == nil {
			t.Fatalf("no crash at %s", step)
		}
		if step == "renamed-live" { // the crash between the renames: recover must finish the swap
			_, errLive := cfs.Stat("/data/projector")
			_, errOld := cfs.Stat("/data/projector.old")
			if errLive == nil || errOld != nil {
				t.Fatalf("crash between the renames: Dir %v, Dir.old %v; want only Dir.old", errLive, errOld)
			}
		}
		c := cfg
		c.FS, c.switchStep = cfs, nil
		p, err := New(c)
		if err != nil {
			t.Fatalf("crash at %s: %v", step, err)
		}
		if got := liveDigest(t, p); got != want {
			t.Errorf("crash at %s: %+v, want %+v", step, got, want)
		}
		for _, d := range []string{"/data/projector.rebuild", "/data/projector.old"} {
			if _, err := cfs.Stat(d); err == nil {
				t.Errorf("crash at %s: %s is left", step, d)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// crashableData returns a crashable file system holding /data, synced.
func crashableData(t testing.TB) *vfs.MemFS {
	t.Helper()
	fs := vfs.NewCrashableMem()
	if err := fs.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := fs.OpenDir("/")
	if err == nil {
		err = errors.Join(root.Sync(), root.Close())
	}
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// Without Run there is no online rebuild; its status is idle.
func TestOnlineRebuildNeedsRun(t *testing.T) {
	_, js := sessionsStream(t)
	p, err := New(Config{JetStream: js, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("close p: %v", err)
		}
	}()
	if _, err := p.StartRebuild(context.Background()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("StartRebuild without Run: %v, want ErrNotRunning", err)
	}
	if st := p.RebuildStatus(); st.State != RebuildIdle {
		t.Fatalf("status: %+v", st)
	}
}

// The admin routes start and follow an online rebuild and give the live
// digest; what they cannot do is refused with a code and a reason.
func TestAdminRoutes(t *testing.T) {
	_, js := sessionsStream(t)
	last := publish(t, js, synth.Log(35, 10, 500))
	h := newHold()
	r := start(t, Config{JetStream: js, Dir: filepath.Join(t.TempDir(), "p"), onlineBatch: 100, onRebuildCommit: h.onCommit})
	waitFor(t, "all applied", func() bool { return r.Applied() == last })
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	do := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: %q", method, path, b)
		}
		return resp.StatusCode, out
	}
	code, out := do("GET", PathDigest, "")
	want := liveDigest(t, r.Projector)
	if code != 200 || out["sha256"] != want.SHA256 || out["applied"] != float64(last) || out["keys"] != float64(want.Keys) {
		t.Fatalf("digest = %d %v, want %+v", code, out, want)
	}
	if code, out := do("GET", PathRebuild, ""); code != 200 || out["state"] != RebuildIdle {
		t.Fatalf("status before = %d %v", code, out)
	}
	for _, c := range []struct {
		method, path, body string
		code               int
		errCode            string
	}{
		{"POST", PathRebuild, "now please", 400, "invalid_body"},
		{"POST", PathRebuild + "?force=1", "", 400, "invalid_parameter"},
		{"PUT", PathRebuild, "", 405, "method_not_allowed"},
		{"POST", PathDigest, "", 405, "method_not_allowed"},
		{"GET", PathDigest + "?keys=1", "", 400, "invalid_parameter"},
	} {
		code, out := do(c.method, c.path, c.body)
		e, _ := out["error"].(map[string]any)
		if code != c.code || e["code"] != c.errCode || e["message"] == "" {
			t.Errorf("%s %s %q = %d %v, want %d %s", c.method, c.path, c.body, code, out, c.code, c.errCode)
		}
	}
	if code, out := do("POST", PathRebuild, "{}"); code != 202 || out["state"] != RebuildRebuilding {
		t.Fatalf("start = %d %v", code, out)
	}
	<-h.reached
	if code, out := do("POST", PathRebuild, ""); code != 409 {
		t.Fatalf("a second start = %d %v, want 409", code, out)
	}
	code, out = do("GET", PathRebuild, "")
	if code != 200 || out["state"] != RebuildRebuilding || out["remaining"].(float64) <= 0 || out["target"] != float64(last) {
		t.Fatalf("status mid-rebuild = %d %v", code, out)
	}
	close(h.release)
	rebuildDone(t, r.Projector)
	if code, out := do("GET", PathDigest, ""); code != 200 || out["sha256"] != want.SHA256 {
		t.Fatalf("digest after = %d %v, want %s", code, out, want.SHA256)
	}
	r.stop(t)
	if code, out := do("POST", PathRebuild, ""); code != 503 {
		t.Fatalf("start with Run stopped = %d %v, want 503", code, out)
	}
}
