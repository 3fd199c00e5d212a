package gateway

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/llm"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Gateway. The zero value of every field but JetStream
// means its default.
type Config struct {
	// JetStream is the connection to the platform's NATS. Required.
	JetStream jetstream.JetStream
	// Names of streams and subjects; default prefix "cairn".
	Names events.Names
	// Addr is the HTTP listen address. Default 127.0.0.1:8080.
	Addr string
	// Queries answers the read-model queries (the projector's handler,
	// mounted in process or proxied). Nil: those routes answer 503.
	Queries http.Handler
	// Log is the session log, read for contexts and exports and written by
	// imports. Nil: those routes answer 503.
	Log session.Log
	// ImportRefused, when set, is why this gateway cannot import sessions:
	// a standalone gateway's NATS user may not write session logs (only
	// orchestrators do), so POST /v1/import answers 501 with this reason at
	// once instead of failing on a permission violation.
	ImportRefused string
	// WorkspaceRoot is the root of session workspaces, as the toolrunners
	// have it (--workspace-root): a create whose workspace is outside it is
	// refused at once (pkg/workspace). Empty: the gateway checks only
	// relative workspaces and leaves absolute ones to the orchestrator.
	WorkspaceRoot string
	// Models, when set, is the orchestrator's provider registry: a create
	// or set_model naming a model it cannot resolve is refused at once.
	// Nil: the orchestrator refuses it (a recorded refusal).
	Models Models
	// WaitTimeout bounds ?wait=applied. Default 30s.
	WaitTimeout time.Duration
	// MaxBodyBytes bounds request bodies. Default 16 MiB. A command is
	// also refused 413 when it is over what the platform's NATS stores in
	// one message (its max payload, less room for the log entry's fields).
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading one request's body, from the end of
	// its headers: a client that sends slower is answered 408 and its
	// connection closed, so slow uploads cannot hold handlers. Default 1m.
	BodyReadTimeout time.Duration
	// Registerer receives the gateway's metrics; Gatherer serves /metrics.
	// Default: a new registry.
	Registerer prometheus.Registerer
	Gatherer   prometheus.Gatherer
	// Logger; default discards.
	Logger *slog.Logger
	// ReadyzFields, when set, adds its fields to /readyz's JSON body: under
	// `cairn up` the embedded toolrunner's sandbox level ("sandbox", and
	// "sandboxMissing" when best-effort lacks a layer). It is called on
	// every /readyz request, from handler goroutines. Nil: none.
	ReadyzFields func() map[string]any

	// BootstrapAdminKey, when set, is an API key token (cairn_<id>_<secret>,
	// NewKey) the gateway stores as a platform admin key of the default
	// tenant at start, unless its id is in the keys bucket already (a
	// revoked one stays revoked). `cairn up` and --bootstrap-admin-key-file
	// set it; it never prints.
	BootstrapAdminKey secret.Secret
	// OIDC, with an Issuer, makes the gateway accept that issuer's JWTs
	// besides API keys (oidc.go).
	OIDC OIDCConfig
}

// Models resolves provider/model references; registry.Registry is one.
type Models interface {
	Resolve(ref string) (llm.Provider, llm.Model, error)
}

func (c *Config) setDefaults() {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:8080"
	}
	if c.WaitTimeout == 0 {
		c.WaitTimeout = 30 * time.Second
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 16 << 20
	}
	if c.BodyReadTimeout == 0 {
		c.BodyReadTimeout = time.Minute
	}
	if c.Registerer == nil || c.Gatherer == nil {
		reg := prometheus.NewRegistry()
		c.Registerer, c.Gatherer = reg, reg
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports the first invalid field.
func (c *Config) Validate() error {
	if c.JetStream == nil {
		return errors.New("gateway: JetStream is required")
	}
	if c.WaitTimeout < 0 {
		return errors.New("gateway: WaitTimeout must not be negative")
	}
	if c.MaxBodyBytes < 0 {
		return errors.New("gateway: MaxBodyBytes must not be negative")
	}
	if c.BodyReadTimeout < 0 {
		return errors.New("gateway: BodyReadTimeout must not be negative")
	}
	if !c.BootstrapAdminKey.IsZero() {
		if _, _, err := ParseKey(c.BootstrapAdminKey); err != nil {
			return fmt.Errorf("gateway: bootstrap admin key: %w", err)
		}
	}
	if err := c.OIDC.Validate(); err != nil {
		return err
	}
	if c.Names.Prefix != "" {
		if err := events.ValidatePrefix(c.Names.Prefix); err != nil {
			return err
		}
	}
	return nil
}
