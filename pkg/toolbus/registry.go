package toolbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/cairn-agents/cairn/pkg/jsretry"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/nats-io/nats.go/jetstream"
)

// Registration is one tool in the registry (KV bucket cairn_tools, key = tool
// name): its spec as the model sees it plus the pool that serves it.
type Registration struct {
	events.ToolSpec
	Pool string `json:"pool"`
	// Tenants, if set, are the only tenants whose sessions the pool
	// serves (see [Worker].Tenants); empty: every tenant.
	Tenants []string `json:"tenants,omitempty"`
}

// Serves reports whether the pool takes calls of tenant's sessions.
func (r Registration) Serves(tenant string) bool {
	return len(r.Tenants) == 0 || slices.Contains(r.Tenants, tenant)
}

// Register records specs as served by pool. Registering a tool again for the
// same pool replaces its spec (workers of a pool register at every start); a
// tool name registered by another pool is refused with [ErrConflict], since
// the orchestrator routes calls by name.
func (b *Bus) Register(ctx context.Context, pool string, specs ...events.ToolSpec) error {
	return b.register(ctx, pool, nil, specs)
}

// RegisterTenants is [Bus.Register] for a pool restricted to tenants.
func (b *Bus) RegisterTenants(ctx context.Context, pool string, tenants []string, specs ...events.ToolSpec) error {
	for i, t := range tenants {
		if err := events.ValidateTenant(t); err != nil {
			return fieldErr(fmt.Sprintf("tenants[%d]", i), "%v", err)
		}
	}
	return b.register(ctx, pool, tenants, specs)
}

func (b *Bus) register(ctx context.Context, pool string, tenants []string, specs []events.ToolSpec) error {
	if err := validatePool(pool); err != nil {
		return err
	}
	// A worker may start while the bucket still elects a leader (just
	// provisioned, or a NATS node lost): it waits for an answer.
	var kv jetstream.KeyValue
	err := jsretry.Do(ctx, func(ctx context.Context) (err error) {
		kv, err = b.js.KeyValue(ctx, b.names.ToolsBucket())
		return err
	})
	if err != nil {
		return bucketErr(b.names.ToolsBucket(), err)
	}
	for _, s := range specs {
		if err := validateSpec(s); err != nil {
			return err
		}
		if s.Mode == "" {
			s.Mode = events.Parallel
		}
		data, err := json.Marshal(Registration{ToolSpec: s, Pool: pool, Tenants: tenants})
		if err != nil {
			return err
		}
		for {
			var conflict error
			err := jsretry.Do(ctx, func(ctx context.Context) error {
				e, err := kv.Get(ctx, s.Name)
				switch {
				case errors.Is(err, jetstream.ErrKeyNotFound):
					_, err = kv.Create(ctx, s.Name, data)
				case err != nil:
				default:
					var old Registration
					if json.Unmarshal(e.Value(), &old) == nil && old.Pool != pool {
						conflict = fmt.Errorf("%w: tool %q is registered by pool %q, not %q", ErrConflict, s.Name, old.Pool, pool)
						return nil
					}
					_, err = kv.Update(ctx, s.Name, data, e.Revision())
				}
				return err
			})
			if conflict != nil {
				return conflict
			}
			if err == nil {
				break
			}
			if !errors.Is(err, jetstream.ErrKeyExists) && !isWrongLastSeq(err) {
				return fmt.Errorf("toolbus: register %q: %w", s.Name, err)
			}
			// Lost a race with another worker; read again.
		}
	}
	return nil
}

// isWrongLastSeq reports an optimistic-concurrency conflict: code 10071 on
// R1 buckets, 10164 (or ErrKeyRevisionMismatch) on replicated ones.
func isWrongLastSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Lookup returns the registration of tool name, or [ErrNotFound].
func (b *Bus) Lookup(ctx context.Context, name string) (Registration, error) {
	kv, err := b.js.KeyValue(ctx, b.names.ToolsBucket())
	if err != nil {
		return Registration{}, bucketErr(b.names.ToolsBucket(), err)
	}
	if err := events.ValidateToolName("name", name); err != nil {
		return Registration{}, err
	}
	e, err := kv.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Registration{}, fmt.Errorf("%w: tool %q is not registered", ErrNotFound, name)
	}
	if err != nil {
		return Registration{}, err
	}
	var r Registration
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return Registration{}, fmt.Errorf("toolbus: registration of %q: %w", name, err)
	}
	return r, nil
}

// Tools returns every registered tool, sorted by name.
func (b *Bus) Tools(ctx context.Context) ([]Registration, error) {
	kv, err := b.js.KeyValue(ctx, b.names.ToolsBucket())
	if err != nil {
		return nil, bucketErr(b.names.ToolsBucket(), err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var out []Registration
	for k := range keys.Keys() {
		r, err := b.Lookup(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func validateSpec(s events.ToolSpec) error {
	if err := events.ValidateToolName("name", s.Name); err != nil {
		return err
	}
	if len(s.Parameters) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(s.Parameters, &obj); err != nil {
			return fieldErr("parameters", "tool %q: JSON schema must be a JSON object: %v", s.Name, err)
		}
	}
	switch s.Mode {
	case "", events.Parallel, events.Sequential:
	default:
		return fieldErr("executionMode", "tool %q: %q is not parallel or sequential", s.Name, s.Mode)
	}
	if s.TimeoutMs < 0 {
		return fieldErr("timeoutMs", "tool %q: must not be negative, got %d", s.Name, s.TimeoutMs)
	}
	return nil
}

func bucketErr(bucket string, err error) error {
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return fmt.Errorf("%w: KV bucket %s does not exist", ErrNotProvisioned, bucket)
	}
	return fmt.Errorf("toolbus: bucket %s: %w", bucket, err)
}
