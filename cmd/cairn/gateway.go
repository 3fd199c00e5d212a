package main

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/cairn-agents/cairn/pkg/session"
	"github.com/cairn-agents/cairn/pkg/telemetry"
	"github.com/cairn-agents/cairn/services/gateway"
	"github.com/spf13/cobra"
)

func newGatewayCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "gateway",
		Short: "run the HTTP gateway",
		Args:  cobra.NoArgs,
	}
	natsURL := addNATSFlag(c)
	addr := c.Flags().String("http", "127.0.0.1:8080", "HTTP listen address")
	projector := c.Flags().String("projector", envOr("CAIRN_PROJECTOR", ""), "projector query URL; read queries are proxied there (env CAIRN_PROJECTOR)")
	root := addWorkspaceRootFlag(c, "the toolrunners' --workspace-root: a create with a workspace outside it is refused at once (unset: the orchestrator checks)")
	bootstrap := c.Flags().String("bootstrap-admin-key-file", envOr("CAIRN_BOOTSTRAP_ADMIN_KEY_FILE", ""),
		"file holding an API key (cairn keys generate) stored as a platform admin key at start unless its id exists (env CAIRN_BOOTSTRAP_ADMIN_KEY_FILE)")
	oidcFlags := addOIDCFlags(c)
	c.RunE = func(cmd *cobra.Command, _ []string) (err error) {
		wsRoot, err := absRoot(*root)
		if err != nil {
			return err
		}
		oidcCfg, err := oidcFlags.config()
		if err != nil {
			return err
		}
		var adminKey secret.Secret
		if *bootstrap != "" {
			if adminKey, err = readKeyFile(*bootstrap); err != nil {
				return usagef("--bootstrap-admin-key-file: %v", err)
			}
		}
		var queries http.Handler
		if *projector != "" {
			u, err := url.Parse(*projector)
			if err != nil || u.Scheme == "" || u.Host == "" {
				return usagef("--projector: %q is not an http(s) URL", *projector)
			}
			queries = httputil.NewSingleHostReverseProxy(u)
		}
		log := newLogger(e, "gateway")
		nc, js, err := connectNATS(natsURL, "cairn-gateway", provision.RoleGateway, log)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, nc.Drain()) }()
		// Read-only: the gateway's user may not write the log, so it
		// neither writes snapshots (a forged one would poison cold loads).
		sl, err := session.NewJetStreamLog(cmd.Context(), js, session.WithCreate(false), session.WithSnapshotEvery(0))
		if err != nil {
			return err
		}
		reg := telemetry.NewRegistry()
		g, err := gateway.New(gateway.Config{JetStream: js, Log: sl, Addr: *addr, Queries: queries, WorkspaceRoot: wsRoot, Logger: log,
			Registerer: reg, Gatherer: reg, BootstrapAdminKey: adminKey, OIDC: oidcCfg,
			ImportRefused: "import is not available through a standalone gateway: its NATS user may not write session logs; " +
				"import as an operator: cairn import --nats URL --creds ADMIN_SEED FILE"})
		if err != nil {
			return err
		}
		log.Info("gateway listening", "addr", *addr)
		return g.Run(cmd.Context())
	}
	return c
}

// oidcFlags are the gateway's OIDC flags (docs/security.md).
type oidcFlags struct {
	issuer, audience, tenantClaim, defaultTenant, roleClaim, roleMap *string
	skew                                                             *time.Duration
}

func addOIDCFlags(c *cobra.Command) oidcFlags {
	f := c.Flags()
	return oidcFlags{
		issuer:        f.String("oidc-issuer", envOr("CAIRN_OIDC_ISSUER", ""), "accept JWTs of this OIDC issuer besides API keys (env CAIRN_OIDC_ISSUER)"),
		audience:      f.String("oidc-audience", envOr("CAIRN_OIDC_AUDIENCE", ""), "the audience the JWTs must name (env CAIRN_OIDC_AUDIENCE)"),
		tenantClaim:   f.String("oidc-tenant-claim", "cairn_tenant", "the claim holding the tenant"),
		defaultTenant: f.String("oidc-default-tenant", "", "tenant of a JWT without the tenant claim (default: such a JWT is refused)"),
		roleClaim:     f.String("oidc-role-claim", "cairn_role", "the claim holding the role (a string or an array, such as groups)"),
		roleMap:       f.String("oidc-role-map", "", "claim value=role pairs, comma-separated (default: the values are role names)"),
		skew:          f.Duration("oidc-clock-skew", time.Minute, "how long after its exp a JWT is still accepted"),
	}
}

func (o oidcFlags) config() (gateway.OIDCConfig, error) {
	cfg := gateway.OIDCConfig{Issuer: *o.issuer, Audience: *o.audience, TenantClaim: *o.tenantClaim,
		DefaultTenant: *o.defaultTenant, RoleClaim: *o.roleClaim, ClockSkew: *o.skew}
	if *o.roleMap != "" {
		cfg.RoleMap = map[string]gateway.Role{}
		for _, pair := range strings.Split(*o.roleMap, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || k == "" {
				return cfg, usagef("--oidc-role-map: %q is not value=role", pair)
			}
			cfg.RoleMap[k] = gateway.Role(v)
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// newLogger returns the JSON logger of a service.
func newLogger(e *env, service string) *slog.Logger {
	return telemetry.NewLogger(e.stderr, slog.LevelInfo, service) // JSON, trace ids, credentials redacted
}
