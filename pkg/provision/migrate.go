package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The layout before tenants kept a session on one-token subjects
// (cairn.session.<sid>, cairn.cmd.<sid> stored as cairn.cmd.<p>.<sid>).
// Its sessions are the default tenant's. [Apply] refuses to move an
// existing installation off that layout by itself, since changing
// CAIRN_SESSIONS' subjects would strand its sessions; with
// [Options].Migrate it first copies every session of the old layout to
// the default tenant's subject (the stored bytes unchanged, so the hash
// chain holds; Nats-Msg-Id <tenant>.<sid>.<entry id>), then drops the old
// subjects from the stream, and moves CAIRN_COMMANDS to the two-token partition
// transform with the same partitions. Commands stored under the old
// transform stay where they are for audit; stop the orchestrators before
// migrating so none is left unapplied (docs/tenancy.md). Like the rest of
// Apply, migrating deletes nothing: the old messages stay in the stream,
// no longer on any of its subjects, until an operator purges them.

// ErrLegacyLayout says the installation holds sessions in the layout
// before tenants; run Apply with Options.Migrate (`cairn provision
// --migrate`). It matches [ErrIncompatible] too.
var ErrLegacyLayout = errors.New("provision: sessions in the layout before tenants")

// LegacyLayoutError names the stream and how many sessions it holds on
// the old subjects.
type LegacyLayoutError struct {
	Stream   string
	Sessions int
}

func (e *LegacyLayoutError) Error() string {
	return fmt.Sprintf("provision: stream %s holds %d sessions on the subjects of the layout before tenants (<prefix>.session.<sid>); run `cairn provision --migrate` to copy them to the default tenant; nothing was changed",
		e.Stream, e.Sessions)
}

// Is makes errors.Is hold for ErrLegacyLayout and ErrIncompatible.
func (e *LegacyLayoutError) Is(target error) bool {
	return target == ErrLegacyLayout || target == ErrIncompatible
}

// legacyTransform is CAIRN_COMMANDS' transform in the layout before
// tenants.
func legacyTransform(n events.Names, partitions int) *jetstream.SubjectTransformConfig {
	src := n.LegacyPerSession()[n.CommandsStream()]
	return &jetstream.SubjectTransformConfig{Source: src,
		Destination: n.LegacyStoredCommands(partitions)}
}

// legacySessions counts the sessions stream's sessions on old-layout
// subjects (0 if the stream does not take them).
func legacySessions(ctx context.Context, js jetstream.JetStream, n events.Names, have *jetstream.StreamConfig) (map[string]uint64, error) {
	if have == nil || !slices.Contains(have.Subjects, n.LegacySessions()) {
		return nil, nil
	}
	var subjects map[string]uint64
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		s, err := js.Stream(ctx, n.SessionsStream())
		if err != nil {
			return err
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(n.LegacySessions()))
		if err != nil {
			return err
		}
		subjects = info.State.Subjects
		return nil
	})
	return subjects, err
}

// migrateSessions copies every session on an old-layout subject to the
// default tenant's subject, skipping the entries copied by an earlier run.
// The stream must take both layouts.
func migrateSessions(ctx context.Context, js jetstream.JetStream, n events.Names, subjects map[string]uint64) error {
	s, err := js.Stream(ctx, n.SessionsStream())
	if err != nil {
		return err
	}
	for subj := range subjects {
		sid := subj[len(n.LegacySessions())-1:]
		ref := events.DefaultRef(sid)
		if ref.Validate() != nil {
			continue // not a session subject of ours; purged with the rest
		}
		if err := copySession(ctx, js, s, subj, n.SessionSubject(ref), ref); err != nil {
			return fmt.Errorf("provision: migrate session %s: %w", sid, err)
		}
	}
	return nil
}

// copySession appends the messages of from not yet on to, in order, with
// the per-subject sequence check, so two runs never interleave a session.
func copySession(ctx context.Context, js jetstream.JetStream, s jetstream.Stream, from, to string, ref events.SessionRef) error {
	have := map[string]bool{}
	var last uint64
	for m, err := range subjectMsgs(ctx, s, to) {
		if err != nil {
			return err
		}
		have[entryID(m.Data)] = true
		last = m.Sequence
	}
	for m, err := range subjectMsgs(ctx, s, from) {
		if err != nil {
			return err
		}
		id := entryID(m.Data)
		if have[id] {
			continue
		}
		out := &nats.Msg{Subject: to, Data: m.Data, Header: nats.Header{}}
		for k, v := range m.Header {
			// Cairn's own headers (schema, digest) travel; the server's
			// (Nats-Subject, Nats-Sequence... of a direct get) must not,
			// or a direct get of the copy reports the original's place.
			if strings.HasPrefix(k, "Cairn-") {
				out.Header[k] = v
			}
		}
		out.Header.Set(events.HeaderMsgID, events.MsgID(ref, id))
		ack, err := js.PublishMsg(ctx, out, jetstream.WithExpectLastSequencePerSubject(last))
		if err != nil {
			return err
		}
		last = ack.Sequence
	}
	return nil
}

// subjectMsgs yields the messages of subject in stream order.
func subjectMsgs(ctx context.Context, s jetstream.Stream, subject string) func(func(*jetstream.RawStreamMsg, error) bool) {
	return func(yield func(*jetstream.RawStreamMsg, error) bool) {
		for seq := uint64(1); ; {
			m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				return
			}
			if !yield(m, err) || err != nil {
				return
			}
			seq = m.Sequence + 1
		}
	}
}

func entryID(data []byte) string {
	var e struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(data, &e) // an entry that does not decode is copied as it is, once
	return e.ID
}
