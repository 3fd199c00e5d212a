package resources

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// Kind is a kind of resource.
type Kind string

// The kinds of resource.
const (
	KindSkill    Kind = "skill"
	KindTemplate Kind = "template"
	// KindSystem is a tenant's part of the system prompt, pi's SYSTEM.md
	// and APPEND_SYSTEM.md: SystemBase, the base prompt of a session that
	// gives none, and SystemAppend, the additions after the base.
	KindSystem Kind = "system"
)

// ErrNotFound: the tenant has no such resource.
var ErrNotFound = errors.New("resource not found")

// Stored is one resource as the store keeps it.
type Stored struct {
	Kind        Kind   `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Version is the resource's KV revision: it grows with every put of
	// any resource, so a version names one text of one resource.
	Version uint64    `json:"version"`
	Updated time.Time `json:"updated"`
	Text    string    `json:"text,omitempty"`
	// DisableModelInvocation: a skill left out of the system prompt's list.
	DisableModelInvocation bool `json:"disableModelInvocation,omitempty"`
}

// Store keeps tenants' skills and templates in the resources KV bucket
// ([events.Names.ResourcesBucket]), one key per resource
// ([events.ResourceKey]).
//
// A put parses the text first and refuses what does not parse; what is
// stored is the text as given. A tenant only ever reaches its own keys:
// every method takes the tenant, checked, and builds the key from it.
type Store struct {
	kv jetstream.KeyValue
}

// OpenStore opens the resources bucket, creating it (one replica,
// pkg/provision's configuration) if it does not exist yet.
func OpenStore(ctx context.Context, js jetstream.JetStream, names events.Names) (*Store, error) {
	kv, err := js.KeyValue(ctx, names.ResourcesBucket())
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, provision.ResourcesBucket(names, 1))
	}
	if err != nil {
		return nil, fmt.Errorf("resources: bucket %s: %w", names.ResourcesBucket(), err)
	}
	return &Store{kv: kv}, nil
}

// Parse checks text as a resource of kind named name and returns what the
// store would keep, without its version.
func Parse(kind Kind, name, text string) (Stored, error) {
	st := Stored{Kind: kind, Name: name, Text: text}
	switch kind {
	case KindSkill:
		s, err := ParseSkill(name, text)
		if err != nil {
			return Stored{}, err
		}
		st.Description, st.DisableModelInvocation = s.Description, s.DisableModelInvocation
	case KindTemplate:
		t, err := ParseTemplate(name, text)
		if err != nil {
			return Stored{}, err
		}
		st.Description = t.Description
	case KindSystem:
		if err := ValidateSystemName(name); err != nil {
			return Stored{}, err
		}
		if err := checkText("system", name, text); err != nil {
			return Stored{}, err
		}
	default:
		return Stored{}, fmt.Errorf("resources: unknown kind %q", kind)
	}
	return st, nil
}

func checkRef(tenant string, kind Kind, name string) error {
	if err := events.ValidateTenant(tenant); err != nil {
		return err
	}
	switch kind {
	case KindSkill:
		return ValidateSkillName(name)
	case KindTemplate:
		return ValidateTemplateName(name)
	case KindSystem:
		return ValidateSystemName(name)
	}
	return fmt.Errorf("resources: unknown kind %q", kind)
}

// Put stores text as tenant's resource kind/name, replacing any earlier
// version, and returns it with its new version. Text that does not parse
// is refused with an [*Error].
func (s *Store) Put(ctx context.Context, tenant string, kind Kind, name, text string) (Stored, error) {
	if err := checkRef(tenant, kind, name); err != nil {
		return Stored{}, err
	}
	st, err := Parse(kind, name, text)
	if err != nil {
		return Stored{}, err
	}
	rev, err := s.kv.Put(ctx, events.ResourceKey(tenant, string(kind), name), []byte(text))
	if err != nil {
		return Stored{}, fmt.Errorf("resources: store %s %q: %w", kind, name, err)
	}
	st.Version, st.Updated = rev, time.Now().UTC()
	return st, nil
}

// Get returns tenant's resource kind/name at its latest version, or
// [ErrNotFound].
func (s *Store) Get(ctx context.Context, tenant string, kind Kind, name string) (Stored, error) {
	if err := checkRef(tenant, kind, name); err != nil {
		return Stored{}, err
	}
	e, err := s.kv.Get(ctx, events.ResourceKey(tenant, string(kind), name))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Stored{}, fmt.Errorf("%w: no %s %q", ErrNotFound, kind, name)
	}
	if err != nil {
		return Stored{}, fmt.Errorf("resources: read %s %q: %w", kind, name, err)
	}
	return decode(kind, name, e)
}

// GetVersion returns version of tenant's resource kind/name while the
// bucket keeps it (the last ResourcesHistory versions), or [ErrNotFound].
func (s *Store) GetVersion(ctx context.Context, tenant string, kind Kind, name string, version uint64) (Stored, error) {
	if err := checkRef(tenant, kind, name); err != nil {
		return Stored{}, err
	}
	e, err := s.kv.GetRevision(ctx, events.ResourceKey(tenant, string(kind), name), version)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Stored{}, fmt.Errorf("%w: no version %d of %s %q", ErrNotFound, version, kind, name)
	}
	if err != nil {
		return Stored{}, fmt.Errorf("resources: read %s %q: %w", kind, name, err)
	}
	return decode(kind, name, e)
}

func decode(kind Kind, name string, e jetstream.KeyValueEntry) (Stored, error) {
	if e.Operation() != jetstream.KeyValuePut {
		return Stored{}, fmt.Errorf("%w: no %s %q", ErrNotFound, kind, name)
	}
	st, err := Parse(kind, name, string(e.Value()))
	if err != nil {
		// Stored by an older, laxer rule: still readable, its problem said.
		st = Stored{Kind: kind, Name: name, Text: string(e.Value()), Description: "(does not parse: " + err.Error() + ")"}
	}
	st.Version, st.Updated = e.Revision(), e.Created().UTC()
	return st, nil
}

// Delete removes tenant's resource kind/name, or answers [ErrNotFound].
func (s *Store) Delete(ctx context.Context, tenant string, kind Kind, name string) error {
	if _, err := s.Get(ctx, tenant, kind, name); err != nil {
		return err
	}
	if err := s.kv.Delete(ctx, events.ResourceKey(tenant, string(kind), name)); err != nil {
		return fmt.Errorf("resources: delete %s %q: %w", kind, name, err)
	}
	return nil
}

// List returns tenant's resources of kind, sorted by name, without their
// text.
func (s *Store) List(ctx context.Context, tenant string, kind Kind) ([]Stored, error) {
	return s.list(ctx, tenant, kind, false)
}

// All returns tenant's resources of kind with their text, sorted by name:
// what a save point reads.
func (s *Store) All(ctx context.Context, tenant string, kind Kind) ([]Stored, error) {
	return s.list(ctx, tenant, kind, true)
}

func (s *Store) list(ctx context.Context, tenant string, kind Kind, text bool) ([]Stored, error) {
	if err := events.ValidateTenant(tenant); err != nil {
		return nil, err
	}
	keys, err := s.kv.ListKeysFiltered(ctx, events.ResourceKey(tenant, string(kind), "*"))
	if err != nil {
		return nil, fmt.Errorf("resources: list %ss: %w", kind, err)
	}
	prefix := len(events.ResourceKey(tenant, string(kind), ""))
	var out []Stored
	for k := range keys.Keys() {
		st, err := s.Get(ctx, tenant, kind, k[prefix:])
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !text {
			st.Text = ""
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// String is the kind's name.
func (k Kind) String() string { return string(k) }
