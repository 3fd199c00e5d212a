package projector

import (
	"net/http"

	"github.com/cairn-agents/cairn/internal/opshttp"
)

// Readiness is the body of /readyz.
type Readiness struct {
	Status     string `json:"status"`     // "ready" or "starting"
	Applied    uint64 `json:"applied"`    // last applied stream sequence
	StreamLast uint64 `json:"streamLast"` // last stream sequence the projector knows of
	LagEntries uint64 `json:"lagEntries"` // StreamLast - Applied
}

// Readiness reports the projector's position: ready once Run consumes.
func (p *Projector) Readiness() Readiness {
	r := Readiness{Status: "starting", Applied: p.prog.applied.Load(), StreamLast: p.prog.streamLast.Load(), LagEntries: p.prog.lag()}
	if p.prog.running.Load() {
		r.Status = "ready"
	}
	return r
}

// OpsHandler serves the queries (Handler) and /healthz, /readyz and
// /metrics: what `cairn projector --http` listens with. /readyz answers 503
// until the consumer runs; its lagEntries says how far behind the stream the
// projector is (the stream's last sequence is refreshed every second).
func (p *Projector) OpsHandler() http.Handler {
	return opshttp.Handler(opshttp.Config{Gatherer: p.cfg.Registry, Fallback: p.Handler(),
		Readiness: func() (bool, any) {
			r := p.Readiness()
			return r.Status == "ready", r
		}})
}
