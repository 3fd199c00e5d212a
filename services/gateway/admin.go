package gateway

import "net/http"

// Admin routes: operations on the platform itself, proxied to the service
// that performs them. Today every caller may use them; once identity lands
// (DESIGN §9) they are for the admin role only, and a principal of another
// role gets 403 forbidden.
//
// The projector's: an online rebuild of the read models (POST starts it, 202
// with its progress; GET follows it: entries per second, remaining, state),
// and the live database's digest. They go to Config.Queries, the
// projector's handler in process (`cairn up`) or proxied to its URL
// (`cairn gateway --projector URL`), like the read queries; without it they
// answer 503.
var adminPatterns = []string{
	"POST /v1/admin/projector/rebuild",
	"GET /v1/admin/projector/rebuild",
	"GET /v1/admin/projector/digest",
}

// adminRoutes registers the admin routes with handle (routes' helper).
func (g *Gateway) adminRoutes(handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	queries := g.queries()
	for _, p := range adminPatterns {
		handle(p, "admin", true, queries)
	}
}
