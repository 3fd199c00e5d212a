package provision

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrIncompatible says an existing stream, bucket or consumer differs from
// Cairn's configuration in a setting the server cannot change in place (or
// that provision refuses to change because it would drop messages).
var ErrIncompatible = errors.New("provision: incompatible with what exists")

// IncompatibleError names the object and the setting that differs. It
// matches [ErrIncompatible] with errors.Is.
type IncompatibleError struct {
	Kind  Kind
	Name  string
	Field string // the Go field of jetstream.StreamConfig or ConsumerConfig
	Have  string // the existing value
	Want  string // Cairn's value
}

func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("provision: %s %s has %s %s, Cairn needs %s, which the server cannot change in place (keep its messages elsewhere if they matter, delete it and provision again); nothing was changed",
		e.Kind, e.Name, e.Field, e.Have, e.Want)
}

// Is makes errors.Is(err, ErrIncompatible) true.
func (e *IncompatibleError) Is(target error) bool { return target == ErrIncompatible }

// streamConflicts lists what keeps an existing stream (have) from being
// updated to want: the settings the server refuses to change (storage,
// to/from work queue retention, unsealing, cancelling deny delete or purge,
// a mirror, disabling message TTLs or schedules, the counter and persist
// modes), any retention change (limits to interest drops messages nobody
// is interested in), and a changed subject transform (it decides where
// messages are stored: CAIRN_COMMANDS' partitions are fixed when it is
// created).
func streamConflicts(kind Kind, name string, have, want jetstream.StreamConfig) []error {
	var errs []error
	add := func(field string, h, w any) {
		errs = append(errs, &IncompatibleError{Kind: kind, Name: name, Field: field, Have: fmt.Sprint(h), Want: fmt.Sprint(w)})
	}
	if have.Storage != want.Storage {
		add("Storage", have.Storage, want.Storage)
	}
	if have.Retention != want.Retention {
		add("Retention", have.Retention, want.Retention)
	}
	if have.Sealed && !want.Sealed {
		add("Sealed", true, false)
	}
	if have.DenyDelete && !want.DenyDelete {
		add("DenyDelete", true, false)
	}
	if have.DenyPurge && !want.DenyPurge {
		add("DenyPurge", true, false)
	}
	if have.Mirror != nil && want.Mirror == nil {
		add("Mirror", have.Mirror.Name, "none")
	}
	if have.AllowMsgTTL && !want.AllowMsgTTL {
		add("AllowMsgTTL", true, false)
	}
	if have.AllowMsgCounter != want.AllowMsgCounter {
		add("AllowMsgCounter", have.AllowMsgCounter, want.AllowMsgCounter)
	}
	if have.AllowMsgSchedules && !want.AllowMsgSchedules {
		add("AllowMsgSchedules", true, false)
	}
	if have.PersistMode != want.PersistMode {
		add("PersistMode", have.PersistMode, want.PersistMode)
	}
	if !reflect.DeepEqual(transform(have.SubjectTransform), transform(want.SubjectTransform)) {
		add("SubjectTransform", transform(have.SubjectTransform), transform(want.SubjectTransform))
	}
	return errs
}

func transform(t *jetstream.SubjectTransformConfig) string {
	if t == nil {
		return "none"
	}
	return t.Source + " -> " + t.Destination
}

// serverMaxWaiting is the server's MaxWaiting of a pull consumer that sets
// none.
const serverMaxWaiting = 512

// consumerConflicts lists the settings of an existing consumer the server
// refuses to update to want.
func consumerConflicts(name string, have, want jetstream.ConsumerConfig) []error {
	var errs []error
	add := func(field string, h, w any) {
		errs = append(errs, &IncompatibleError{Kind: KindConsumer, Name: name, Field: field, Have: fmt.Sprint(h), Want: fmt.Sprint(w)})
	}
	if have.DeliverPolicy != want.DeliverPolicy {
		add("DeliverPolicy", have.DeliverPolicy, want.DeliverPolicy)
	}
	if have.AckPolicy != want.AckPolicy {
		add("AckPolicy", have.AckPolicy, want.AckPolicy)
	}
	if have.ReplayPolicy != want.ReplayPolicy {
		add("ReplayPolicy", have.ReplayPolicy, want.ReplayPolicy)
	}
	if have.MemoryStorage != want.MemoryStorage {
		add("MemoryStorage", have.MemoryStorage, want.MemoryStorage)
	}
	if have.OptStartSeq != want.OptStartSeq {
		add("OptStartSeq", have.OptStartSeq, want.OptStartSeq)
	}
	if have.OptStartTime != nil {
		add("OptStartTime", have.OptStartTime, "none")
	}
	if w := cmp.Or(want.MaxWaiting, serverMaxWaiting); have.MaxWaiting != w {
		add("MaxWaiting", have.MaxWaiting, w)
	}
	return errs
}
