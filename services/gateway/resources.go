package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/resources"
	"github.com/nats-io/nats.go/jetstream"
)

// Skills and prompt templates (pkg/resources, docs/resources.md): the
// tenant's resources, stored in the resources bucket. PUT takes the text
// itself as the body (a SKILL.md, a template's markdown), or JSON
// {"text": ...}; GET answers JSON with the text and its version. The
// tenant is the request's (tenantOf): another tenant's resource is not
// found.

type resourceStore struct {
	js    jetstream.JetStream
	names events.Names
	mu    struct {
		sync.Mutex
		store *resources.Store
	}
}

func (s *resourceStore) open(ctx context.Context) (*resources.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.store != nil {
		return s.mu.store, nil
	}
	st, err := resources.OpenStore(ctx, s.js, s.names)
	if err != nil {
		return nil, err
	}
	s.mu.store = st
	return st, nil
}

func (g *Gateway) resourceRoutes(handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	for _, k := range []struct {
		kind resources.Kind
		path string
	}{{resources.KindSkill, "/v1/skills"}, {resources.KindTemplate, "/v1/templates"}, {resources.KindSystem, "/v1/system-prompt"}} {
		route := string(k.kind)
		handle("GET "+k.path, route, true, g.listResources(k.kind))
		handle("PUT "+k.path+"/{name}", route, true, g.putResource(k.kind))
		handle("GET "+k.path+"/{name}", route, true, g.getResource(k.kind))
		handle("DELETE "+k.path+"/{name}", route, true, g.deleteResource(k.kind))
	}
}

// resourceCall resolves the request's tenant and the store, answering the
// error itself when it cannot.
func (g *Gateway) resourceCall(w http.ResponseWriter, r *http.Request) (string, *resources.Store, bool) {
	t, ok := tenant(w, r)
	if !ok {
		return "", nil, false
	}
	st, err := g.resources.open(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "resources are not available: "+err.Error())
		return "", nil, false
	}
	return t, st, true
}

func (g *Gateway) resourceError(w http.ResponseWriter, err error) {
	var fe *events.FieldError
	switch {
	case errors.Is(err, resources.ErrNotFound):
		writeError(w, http.StatusNotFound, codeNotFound, err.Error())
	case errors.Is(err, resources.ErrInvalid), errors.As(err, &fe):
		writeError(w, http.StatusBadRequest, codeInvalid, err.Error())
	default:
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, err.Error())
	}
}

func (g *Gateway) putResource(kind resources.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, st, ok := g.resourceCall(w, r)
		if !ok {
			return
		}
		// The text is bounded by the resource limit, not the gateway's body limit.
		body, err := g.readAllLimited(w, r, resources.MaxSize+4096)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeError(w, http.StatusRequestEntityTooLarge, codeTooLarge, fmt.Sprintf("a %s is at most %d bytes", kind, resources.MaxSize))
				return
			}
			g.writeBodyError(w, err)
			return
		}
		text := string(body)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			var in struct {
				Text *string `json:"text"`
			}
			dec := json.NewDecoder(strings.NewReader(text))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil || in.Text == nil {
				writeError(w, http.StatusBadRequest, codeInvalid, `a JSON body is {"text": "..."}`)
				return
			}
			text = *in.Text
		}
		out, err := st.Put(r.Context(), t, kind, r.PathValue("name"), text)
		if err != nil {
			g.resourceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func (g *Gateway) getResource(kind resources.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, st, ok := g.resourceCall(w, r)
		if !ok {
			return
		}
		out, err := st.Get(r.Context(), t, kind, r.PathValue("name"))
		if err != nil {
			g.resourceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func (g *Gateway) deleteResource(kind resources.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, st, ok := g.resourceCall(w, r)
		if !ok {
			return
		}
		if err := st.Delete(r.Context(), t, kind, r.PathValue("name")); err != nil {
			g.resourceError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"kind": kind, "name": r.PathValue("name"), "deleted": true})
	}
}

func (g *Gateway) listResources(kind resources.Kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t, st, ok := g.resourceCall(w, r)
		if !ok {
			return
		}
		l, err := st.List(r.Context(), t, kind)
		if err != nil {
			g.resourceError(w, err)
			return
		}
		if l == nil {
			l = []resources.Stored{}
		}
		writeJSON(w, http.StatusOK, map[string]any{string(kind) + "s": l})
	}
}
