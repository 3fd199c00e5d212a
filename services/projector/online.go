package projector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/services/projector/internal/store"
	"github.com/nats-io/nats.go/jetstream"
)

// An online rebuild recreates the read models from stream sequence 1 while
// the projector runs and serves queries, then switches over to them. It
// runs on a goroutine of Run's, in three steps:
//
//  1. rebuilding: a fresh database in Dir.rebuild (dirs.go) is filled from
//     sequence 1 with an ordered consumer, as [Rebuild] does, through the
//     stream's last sequence when it started (the target), and on until it
//     is within catchUpSlack entries of the live projector.
//  2. switching: between two of its batches, the live projector pauses (its
//     consumer keeps delivering), the rebuilt database applies the few
//     entries it still lacks up to the live one's sequence, both are
//     closed, new queries wait while those in progress end (at most
//     switchWait, else the rebuild fails and nothing changes), the
//     directories are swapped and the rebuilt database opens as the live
//     one; queries go on there and the projector applies what came next.
//  3. done: the old database is removed.
//
// Since the models depend only on the log and its order, the rebuilt
// database at the live sequence holds, key for key, what the live one held:
// the digest after a rebuild equals the digest before (DESIGN §6).

// Rebuild states ([RebuildStatus.State]).
const (
	RebuildIdle       = "idle"       // none since the projector started
	RebuildRebuilding = "rebuilding" // filling the fresh database
	RebuildSwitching  = "switching"  // catching up and switching over
	RebuildDone       = "done"       // switched over
	RebuildFailed     = "failed"     // see Error; the live database is unchanged
)

// Errors of [Projector.StartRebuild].
var (
	ErrRebuildRunning = errors.New("projector: an online rebuild is already running")
	ErrNotRunning     = errors.New("projector: not running: an online rebuild needs the live projector (Run)")
)

// catchUpSlack is how many entries behind the live projector the rebuild may
// be when it asks to switch over: the live projector pauses while the
// rebuild applies them.
const catchUpSlack = 4 * DefaultBatchSize

// switchWait bounds how long the switch-over waits for the queries in
// progress to end.
const switchWait = 30 * time.Second

// RebuildStatus is where an online rebuild stands: the answer of
// [Projector.RebuildStatus] and of GET /v1/admin/projector/rebuild.
type RebuildStatus struct {
	State    string `json:"state"`              // one of the Rebuild* states
	Started  string `json:"started,omitempty"`  // RFC 3339
	Finished string `json:"finished,omitempty"` // RFC 3339, once done or failed
	// Target is the stream's last sequence when the rebuild started.
	Target uint64 `json:"target"`
	// Applied is the last sequence the rebuild has applied (the last batch
	// may be committing still).
	Applied uint64 `json:"applied"`
	// LiveApplied is the live projector's applied sequence.
	LiveApplied uint64 `json:"liveApplied"`
	// Remaining is what the rebuilt database still lacks before the
	// switch-over: max(Target, LiveApplied) − Applied.
	Remaining        uint64  `json:"remaining"`
	EntriesPerSecond float64 `json:"entriesPerSecond"` // Applied over the time since Started
	ElapsedSeconds   float64 `json:"elapsedSeconds"`
	// EtaSeconds is Remaining at EntriesPerSecond; absent when unknown.
	EtaSeconds float64 `json:"etaSeconds,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// Running reports whether the rebuild has not ended.
func (s RebuildStatus) Running() bool {
	return s.State == RebuildRebuilding || s.State == RebuildSwitching
}

// rebuilds is the projector's online rebuild: at most one at a time, on a
// goroutine Run owns.
type rebuilds struct {
	mu struct {
		sync.Mutex
		ctx context.Context // Run's, nil while Run does not run
		job *rebuildJob     // the last one started, nil if none
	}
	wg       sync.WaitGroup
	switches chan *switchReq // to Run's goroutine (pump)
}

// rebuildJob is one online rebuild.
type rebuildJob struct {
	started time.Time
	target  uint64
	empty   bool     // the stream held no message at the start
	prog    progress // the rebuilt database's
	// guarded by rebuilds.mu
	state    string
	finished time.Time
	err      error
}

// switchReq hands the rebuilt database to Run's goroutine, which switches
// over to it (or closes it) and answers on result.
type switchReq struct {
	db     *store.DB
	w      *store.Writer
	job    *rebuildJob
	result chan error // buffered
}

// StartRebuild starts an online rebuild and returns its status once it
// knows its target (the stream's last sequence); [Projector.RebuildStatus]
// follows it. It fails with ErrRebuildRunning if one runs, ErrNotRunning if
// Run does not, or if the stream cannot be read (ctx bounds that). The
// rebuild ends when it has switched over, failed, or Run has ended (then
// its partial database is removed).
func (p *Projector) StartRebuild(ctx context.Context) (RebuildStatus, error) {
	if st := p.RebuildStatus(); st.Running() {
		return st, ErrRebuildRunning
	}
	name := p.cfg.names().SessionsStream()
	stream, err := p.cfg.JetStream.Stream(ctx, name)
	if err != nil {
		return p.RebuildStatus(), fmt.Errorf("projector: stream %s: %w", name, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return p.RebuildStatus(), fmt.Errorf("projector: stream %s: %w", name, err)
	}
	r := &p.rb
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.ctx == nil {
		return p.statusLocked(), ErrNotRunning
	}
	if j := r.mu.job; j != nil && (j.state == RebuildRebuilding || j.state == RebuildSwitching) {
		return p.statusLocked(), ErrRebuildRunning
	}
	job := &rebuildJob{started: time.Now(), state: RebuildRebuilding, target: info.State.LastSeq, empty: info.State.Msgs == 0}
	r.mu.job = job
	run := r.mu.ctx
	r.wg.Go(func() {
		err := p.rebuildOnline(run, stream, job)
		p.finishRebuild(job, err)
	})
	return p.statusLocked(), nil
}

// RebuildStatus returns the status of the last online rebuild (state idle
// if there was none).
func (p *Projector) RebuildStatus() RebuildStatus {
	p.rb.mu.Lock()
	defer p.rb.mu.Unlock()
	return p.statusLocked()
}

func (p *Projector) statusLocked() RebuildStatus {
	j := p.rb.mu.job
	live := p.prog.applied.Load()
	if j == nil {
		return RebuildStatus{State: RebuildIdle, LiveApplied: live}
	}
	s := RebuildStatus{State: j.state, Started: events.FormatTime(j.started), Target: j.target,
		Applied: j.prog.last.Load(), LiveApplied: live}
	end := time.Now()
	if !j.finished.IsZero() {
		end = j.finished
		s.Finished = events.FormatTime(j.finished)
	}
	if j.err != nil {
		s.Error = j.err.Error()
	}
	if s.Running() {
		if want := max(s.Target, live); want > s.Applied {
			s.Remaining = want - s.Applied
		}
	}
	s.ElapsedSeconds = end.Sub(j.started).Seconds()
	if s.ElapsedSeconds > 0 {
		s.EntriesPerSecond = float64(s.Applied) / s.ElapsedSeconds
	}
	if s.Remaining > 0 && s.EntriesPerSecond > 0 {
		s.EtaSeconds = float64(s.Remaining) / s.EntriesPerSecond
	}
	return s
}

func (p *Projector) setRebuildState(j *rebuildJob, state string) {
	p.rb.mu.Lock()
	defer p.rb.mu.Unlock()
	j.state = state
}

func (p *Projector) finishRebuild(j *rebuildJob, err error) {
	p.rb.mu.Lock()
	defer p.rb.mu.Unlock()
	j.finished = time.Now()
	j.state, j.err = RebuildDone, err
	if err != nil {
		j.state = RebuildFailed
		p.cfg.Logger.Error("projector: online rebuild failed; the live database is unchanged", "err", err)
		return
	}
	p.cfg.Logger.Info("projector: online rebuild switched over", "applied", j.prog.last.Load(),
		"seconds", j.finished.Sub(j.started).Seconds())
}

// startRebuilds lets StartRebuild run rebuilds under ctx (Run's); the
// returned function stops them and waits for them.
func (p *Projector) startRebuilds(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	p.rb.mu.Lock()
	p.rb.mu.ctx = ctx
	p.rb.mu.Unlock()
	return func() {
		p.rb.mu.Lock()
		p.rb.mu.ctx = nil // no new rebuild from now
		p.rb.mu.Unlock()
		cancel()
		p.rb.wg.Wait()
	}
}

// rebuildOnline fills a fresh database and hands it to Run's goroutine to
// switch over; it removes the old database once that is done.
func (p *Projector) rebuildOnline(ctx context.Context, stream jetstream.Stream, job *rebuildJob) error {
	d := p.dirs
	if err := d.fs.RemoveAll(d.next); err != nil {
		return fmt.Errorf("projector: remove %s: %w", d.next, err)
	}
	db, err := store.Open(d.next, p.storeOptions())
	if err != nil {
		return err
	}
	w, err := db.NewWriter()
	if err == nil {
		err = d.syncParent() // so that a crash leaves it for recover to find, not half of it
	}
	if err != nil {
		return errors.Join(err, db.Close(), d.fs.RemoveAll(d.next))
	}
	handed := false
	defer func() {
		if !handed {
			_ = w.Close()
			_ = db.Close()
			_ = d.fs.RemoveAll(d.next)
		}
	}()
	if !job.empty {
		err := readLogUntil(ctx, stream, p.cfg.names().AllSessions(), w, p.onlineBatch(),
			logRead{prog: &job.prog, onCommit: p.cfg.onRebuildCommit},
			func(_ jetstream.Msg, seq, pending uint64) (bool, bool) {
				return pending == 0 || seq >= job.target && seq+catchUpSlack >= p.prog.applied.Load(), false
			})
		if err != nil {
			return err
		}
	}
	p.setRebuildState(job, RebuildSwitching)
	req := &switchReq{db: db, w: w, job: job, result: make(chan error, 1)}
	select {
	case p.rb.switches <- req:
		handed = true // Run's goroutine closes db and w now, whatever happens
	case <-ctx.Done():
		return fmt.Errorf("projector: stopped before the switch-over: %w", ctx.Err())
	}
	if err := <-req.result; err != nil {
		return err
	}
	if err := d.fs.RemoveAll(d.old); err != nil {
		p.cfg.Logger.Warn("projector: remove the replaced database", "dir", d.old, "err", err)
	}
	return nil
}

// switchOver runs on Run's goroutine between two batches, with live's last
// batch committed: it switches over to the rebuilt database of req and
// returns the writer to go on with (live's if the switch-over failed, which
// req.result says). An error is one the projector cannot go on after: the
// database could not be opened again.
func (p *Projector) switchOver(ctx context.Context, live *store.Writer, req *switchReq) (*store.Writer, error) {
	w, failed, fatal := p.trySwitchOver(ctx, live, req)
	req.result <- errors.Join(failed, fatal)
	return w, fatal
}

func (p *Projector) trySwitchOver(ctx context.Context, live *store.Writer, req *switchReq) (w *store.Writer, failed, fatal error) {
	d, step := p.dirs, p.cfg.switchStep
	if step == nil {
		step = func(string) {}
	}
	discard := func(err error) (*store.Writer, error, error) {
		return live, errors.Join(err, req.w.Close(), req.db.Close(), d.fs.RemoveAll(d.next)), nil
	}
	at := live.Applied()
	if from := req.w.Applied() + 1; from <= at {
		stream, err := p.cfg.JetStream.Stream(ctx, p.cfg.names().SessionsStream())
		if err != nil {
			return discard(fmt.Errorf("projector: catch up: %w", err))
		}
		err = readLogUntil(ctx, stream, p.cfg.names().AllSessions(), req.w, p.onlineBatch(),
			logRead{from: from, prog: &req.job.prog}, func(_ jetstream.Msg, seq, pending uint64) (bool, bool) {
				if seq > at {
					return true, true
				}
				return seq == at || pending == 0, false
			})
		if err != nil {
			return discard(fmt.Errorf("projector: catch up to sequence %d: %w", at, err))
		}
		if req.w.Applied() < at {
			return discard(fmt.Errorf("projector: catch up: the rebuilt database reached sequence %d, the live one is at %d", req.w.Applied(), at))
		}
	}
	step("caught-up")
	if err := errors.Join(req.w.Close(), req.db.Flush(), req.db.Close()); err != nil {
		return live, errors.Join(err, d.fs.RemoveAll(d.next)), nil
	}
	step("closed-rebuilt")
	if !p.live.close(switchWait) {
		return live, errors.Join(fmt.Errorf("projector: queries in progress did not end within %s; the switch-over was given up, try again", switchWait),
			d.fs.RemoveAll(d.next)), nil
	}
	// From here queries wait; every way out opens them again.
	old := p.live.current()
	if err := errors.Join(live.Close(), old.Close()); err != nil {
		p.cfg.Logger.Warn("projector: close the replaced database", "err", err)
	}
	step("closed-live")
	reopen := func(why error) (*store.Writer, error, error) {
		db, err := store.Open(d.live, p.storeOptions())
		if err == nil {
			p.live.open(db)
			var w *store.Writer
			if w, err = db.NewWriter(); err == nil {
				return w, why, nil
			}
		}
		return nil, why, fmt.Errorf("projector: reopen the live database after a failed switch-over: %w", err)
	}
	if err := d.swap(func() { step("renamed-live") }); err != nil {
		return reopen(errors.Join(err, d.fs.RemoveAll(d.next)))
	}
	step("swapped")
	db, err := store.Open(d.live, p.storeOptions())
	if err != nil {
		if uerr := d.unswap(); uerr != nil {
			return nil, err, uerr
		}
		w, failed, fatal := reopen(err)
		return w, errors.Join(failed, d.fs.RemoveAll(d.next)), fatal
	}
	p.live.open(db)
	w, err = db.NewWriter()
	if err != nil {
		return nil, err, err
	}
	step("opened")
	return w, nil, nil
}

func (p *Projector) onlineBatch() int {
	if p.cfg.onlineBatch > 0 {
		return p.cfg.onlineBatch
	}
	return DefaultRebuildBatchSize
}

func (p *Projector) storeOptions() store.Options {
	return store.Options{FS: p.cfg.FS, MemTableSize: p.cfg.MemTableSize, Logger: pebbleLogger{p.cfg.Logger}}
}
