package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
)

// HeaderDigest carries the Digest of a stored entry's bytes, so a reader can
// tell an edited entry from a removed one.
const HeaderDigest = "Cairn-Digest"

// headerMargin is what the payload limit leaves for headers.
const headerMargin = 4096

// JetStreamLog is a [Log] on the stream CAIRN_SESSIONS (see [events.Names]),
// one subject per session, with large parts in the object store bucket
// cairn_blobs and cold-load snapshots in cairn_snapshots.
type JetStreamLog struct {
	js     jetstream.JetStream
	opts   jsOptions
	stream jetstream.Stream
	blobs  BlobStore
	snaps  jetstream.ObjectStore
	limit  int
}

// NewJetStreamLog opens the session log on js, creating its stream and
// buckets if they do not exist (existing ones are used as they are).
func NewJetStreamLog(ctx context.Context, js jetstream.JetStream, opts ...JetStreamOption) (*JetStreamLog, error) {
	o := defaultJSOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	l := &JetStreamLog{js: js, opts: o}
	var err error
	l.stream, err = ensureStream(ctx, js, o.noCreate, provision.SessionsStream(o.names, o.replicas))
	if err != nil {
		return nil, err
	}
	obs, err := ensureObjectStore(ctx, js, o.noCreate, provision.BlobsStore(o.names, o.replicas))
	if err != nil {
		return nil, err
	}
	l.blobs = objectBlobs{obs}
	if o.snapshotEvery > 0 {
		l.snaps, err = ensureObjectStore(ctx, js, o.noCreate, provision.SnapshotsStore(o.names, o.replicas))
		if o.noCreate && errors.Is(err, ErrNotFound) {
			l.snaps, err = nil, nil // reads work without snapshots, only slower
		}
		if err != nil {
			return nil, err
		}
	}
	l.limit = int(js.Conn().MaxPayload()) - headerMargin
	return l, nil
}

func ensureStream(ctx context.Context, js jetstream.JetStream, noCreate bool, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := js.Stream(ctx, cfg.Name)
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("session: look up stream %s: %w", cfg.Name, err)
	}
	if noCreate {
		return nil, fmt.Errorf("%w: stream %s does not exist (wrong server or prefix?)", ErrNotFound, cfg.Name)
	}
	s, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		s, err = js.Stream(ctx, cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("session: create stream %s: %w", cfg.Name, err)
	}
	return s, nil
}

func ensureObjectStore(ctx context.Context, js jetstream.JetStream, noCreate bool, cfg jetstream.ObjectStoreConfig) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, cfg.Bucket)
	if err == nil {
		return obs, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("session: look up bucket %s: %w", cfg.Bucket, err)
	}
	if noCreate {
		return nil, fmt.Errorf("%w: bucket %s does not exist (wrong server or prefix?)", ErrNotFound, cfg.Bucket)
	}
	obs, err = js.CreateObjectStore(ctx, cfg)
	if err != nil {
		if obs2, err2 := js.ObjectStore(ctx, cfg.Bucket); err2 == nil {
			return obs2, nil
		}
		return nil, fmt.Errorf("session: create bucket %s: %w", cfg.Bucket, err)
	}
	return obs, nil
}

// Append implements [Log]. It retries transient failures with the same
// message id and expected sequence, so a retry either lands once or is
// recognised as the write that already landed.
//
// The log deduplicates by entry id (the message id), and an id says nothing
// about the bytes: a writer that retries with the entry rebuilt (a new
// timestamp, a reply generated again) or a second writer that derived the
// same id would be told "duplicate" for bytes it did not write. So whenever
// the stream reports the id as stored already (a duplicate ack on R3, a
// wrong last sequence whose last message carries the id on R1), Append reads
// the stored message back and returns it only if its bytes are the ones
// asked for; otherwise it fails with [ErrConflict], and the writer must
// reload rather than chain the next entry to bytes the log does not hold.
func (l *JetStreamLog) Append(ctx context.Context, sid events.SessionRef, expect uint64, e events.Entry) (Record, error) {
	if err := validateAppend(sid, &e); err != nil {
		return Record{}, err
	}
	data, err := externalize(ctx, e, l.limit, l.blobs)
	if err != nil {
		return Record{}, err
	}
	subj := l.opts.names.SessionSubject(sid)
	msgID := events.MsgID(sid, e.ID)
	digest := Digest(data)
	msg := &nats.Msg{Subject: subj, Data: data, Header: nats.Header{}}
	msg.Header[events.HeaderMsgID] = []string{msgID}
	msg.Header[events.HeaderSchema] = []string{schemaHeader}
	msg.Header[HeaderDigest] = []string{digest}
	var ack *jetstream.PubAck
	err = l.retry(ctx, func(ctx context.Context) error {
		var err error
		ack, err = l.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(expect))
		return err
	})
	if isConflict(err) {
		// On R1 a retry of a write that landed reports a wrong last
		// sequence instead of a duplicate: look at what is last.
		last, lerr := l.lastMsg(ctx, subj)
		if lerr == nil && last.Header.Get(events.HeaderMsgID) == msgID {
			return l.storedAlready(ctx, sid, e.ID, last.Sequence, last.Data, digest)
		}
		return Record{}, fmt.Errorf("%w: session %s: expected last sequence %d: %w", ErrConflict, sid, expect, err)
	}
	if err != nil {
		return Record{}, fmt.Errorf("session: append %s to %s: %w", e.ID, sid, err)
	}
	if ack.Duplicate {
		// R3: the id is stored at ack.Sequence, but by whom, with what bytes?
		m, err := l.msgAt(ctx, ack.Sequence)
		if err != nil {
			return Record{}, fmt.Errorf("session: append %s to %s: read back the entry stored under its id at sequence %d: %w", e.ID, sid, ack.Sequence, err)
		}
		return l.storedAlready(ctx, sid, e.ID, m.Sequence, m.Data, digest)
	}
	e.V = events.SchemaVersion
	return Record{Session: sid, Seq: ack.Sequence, Entry: e, Data: data, Digest: digest}, nil
}

// storedAlready is the answer to an append whose entry id the log holds
// already, at seq with the bytes data: the stored record if they are the
// bytes the writer asked to append (digest), a conflict if they are not.
func (l *JetStreamLog) storedAlready(ctx context.Context, sid events.SessionRef, id string, seq uint64, data []byte, digest string) (Record, error) {
	if got := Digest(data); got != digest {
		return Record{}, fmt.Errorf("%w: session %s: entry %s is stored already (sequence %d) with other bytes (digest %s, this append's %s): another writer, or a retry that rebuilt the entry",
			ErrConflict, sid, id, seq, got, digest)
	}
	return l.rawRecord(ctx, sid, seq, data)
}

var schemaHeader = fmt.Sprint(events.SchemaVersion)

// errCodeDuplicateInProcess is the server's JSStreamDuplicateMessageConflict
// ("duplicate message id is in process"), which nats.go has no name for.
const errCodeDuplicateInProcess jetstream.ErrorCode = 10158

func isConflict(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// rawRecord decodes stored bytes and restores their blobs.
func (l *JetStreamLog) rawRecord(ctx context.Context, sid events.SessionRef, seq uint64, data []byte) (Record, error) {
	rec, err := decodeRecord(sid, seq, data)
	if err != nil {
		return Record{}, err
	}
	if err := inflate(ctx, &rec.Entry, l.blobs); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// errNotApplied: a message the leader acknowledged is not yet readable from
// the replica that answered a direct get.
var errNotApplied = errors.New("session: stored message not yet on the replica that answered")

// msgAt reads the message at stream sequence seq, which the leader has
// acknowledged. A direct get may be answered by a replica that has not applied
// it yet; that is retried like a timeout.
func (l *JetStreamLog) msgAt(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error) {
	var m *jetstream.RawStreamMsg
	err := l.retry(ctx, func(ctx context.Context) error {
		var err error
		m, err = l.stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return fmt.Errorf("%w: %w", errNotApplied, err)
		}
		return err
	})
	return m, err
}

func (l *JetStreamLog) lastMsg(ctx context.Context, subj string) (*jetstream.RawStreamMsg, error) {
	var m *jetstream.RawStreamMsg
	err := l.retry(ctx, func(ctx context.Context) error {
		var err error
		m, err = l.stream.GetLastMsgForSubject(ctx, subj)
		return err
	})
	return m, err
}

// retry runs op until it succeeds, fails for good, or the retry budget or
// ctx runs out. Each attempt gets its own timeout.
func (l *JetStreamLog) retry(ctx context.Context, op func(context.Context) error) error {
	deadline := time.Now().Add(l.opts.retryFor)
	wait := 20 * time.Millisecond
	for {
		actx, cancel := context.WithTimeout(ctx, l.opts.attempt)
		err := op(actx)
		cancel()
		if err == nil || !transient(ctx, err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}

// transient reports whether err may go away by itself: no responders or a
// timeout while the cluster elects a leader, a reconnecting client.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if errors.Is(err, errNotApplied) {
		// Wraps the replica's 404, which the API error test below would
		// take for an answer.
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503s: JetStream or the stream's group temporarily unavailable;
		// 10158: the same message id is being stored right now (an
		// earlier attempt in flight), so the next try is a duplicate.
		return apiErr.Code == 503 || apiErr.ErrorCode == 10008 || apiErr.ErrorCode == errCodeDuplicateInProcess
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected)
}
