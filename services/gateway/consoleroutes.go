package gateway

import (
	"context"
	"net/http"

	"github.com/cairn-agents/cairn/services/gateway/internal/console"
)

// consoleRoutes mounts the web console (internal/console, DESIGN §14) at
// "/". It authenticates with the API's own authenticator and reads through
// mux, the API itself: the console has no other data path.
func (g *Gateway) consoleRoutes(mux *http.ServeMux) error {
	c, err := console.New(console.Config{
		Authenticate: func(ctx context.Context, cred string) (console.Who, error) {
			p, err := g.auth.credential(ctx, cred)
			if err != nil {
				return console.Who{}, err
			}
			t := p.Tenant
			if t == "" {
				t = DefaultTenant
			}
			return console.Who{ID: p.ID, Tenant: t, Role: string(p.Role),
				CanAct: p.Role.Allows(RoleMember), Admin: p.Role == RoleAdmin}, nil
		},
		API:    mux,
		Logger: g.cfg.Logger,
	})
	if err != nil {
		return err
	}
	c.Register(func(pattern string, h http.HandlerFunc) {
		mux.HandleFunc(pattern, g.instrument(pattern, "console", true, h))
	})
	return nil
}
