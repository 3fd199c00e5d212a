package gateway

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The API keys routes: POST /v1/keys creates a key and answers its token,
// the only time it is shown; GET /v1/keys lists keys (never a secret or
// its hash); DELETE /v1/keys/{id} revokes one. An admin manages keys of
// every tenant and role; a tenant-admin those of its own tenant, of role
// tenant-admin or below, and another tenant's key is not found to it.

func (g *Gateway) keyRoutes(handle func(pattern, route string, timed bool, h http.HandlerFunc)) {
	handle("POST /v1/keys", "keys", true, g.createKey)
	handle("GET /v1/keys", "keys", true, g.listKeys)
	handle("DELETE /v1/keys/{id}", "keys", true, g.revokeKey)
}

// keyRequest is the body of POST /v1/keys.
type keyRequest struct {
	Role   Role   `json:"role"`
	Tenant string `json:"tenant"`
	Name   string `json:"name"`
}

// keyView is a key as the API shows it: its record without the hash.
type keyView struct {
	ID        string     `json:"id"`
	Tenant    string     `json:"tenant"`
	Role      Role       `json:"role"`
	Name      string     `json:"name,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	CreatedBy string     `json:"createdBy"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	RevokedBy string     `json:"revokedBy,omitempty"`
	// Token is the key itself, in the answer of POST /v1/keys only.
	Token string `json:"token,omitempty"`
}

func viewOf(r KeyRecord) keyView {
	return keyView{ID: r.ID, Tenant: r.Tenant, Role: r.Role, Name: r.Name, CreatedAt: r.CreatedAt,
		CreatedBy: r.CreatedBy, RevokedAt: r.RevokedAt, RevokedBy: r.RevokedBy}
}

const maxKeyName = 200

func (g *Gateway) createKey(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	body, ok := g.readBody(w, r)
	if !ok {
		return
	}
	var req keyRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "invalid body: "+describeJSONErr(err))
		return
	}
	if req.Role == "" {
		writeError(w, http.StatusBadRequest, codeInvalid, "role: is required (admin, tenant-admin, member or viewer)")
		return
	}
	if err := validRole(req.Role); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "role: "+err.Error())
		return
	}
	if req.Tenant == "" {
		req.Tenant = p.Tenant
	}
	if err := ValidateTenant(req.Tenant); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalid, "tenant: "+err.Error())
		return
	}
	if len(req.Name) > maxKeyName || strings.ContainsFunc(req.Name, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		writeError(w, http.StatusBadRequest, codeInvalid, fmt.Sprintf("name: at most %d characters, no control characters", maxKeyName))
		return
	}
	if p.Role != RoleAdmin {
		if req.Tenant != p.Tenant {
			writeError(w, http.StatusForbidden, codeForbidden, "a tenant-admin creates keys of its own tenant only")
			return
		}
		if !p.Role.Allows(req.Role) {
			writeError(w, http.StatusForbidden, codeForbidden, fmt.Sprintf("role %s may not create a key of role %s", p.Role, req.Role))
			return
		}
	}
	token, id, err := NewKey()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	_, hash, _ := ParseKey(token)
	rec := KeyRecord{ID: id, Tenant: req.Tenant, Role: req.Role, Name: req.Name, Hash: hex.EncodeToString(hash[:]),
		CreatedAt: time.Now().UTC().Truncate(time.Millisecond), CreatedBy: p.ID}
	if err := g.keys.create(r.Context(), rec); err != nil {
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the key was not stored: "+err.Error())
		return
	}
	g.cfg.Logger.Info("gateway: key created", "key", id, "tenant", rec.Tenant, "role", string(rec.Role), "by", p.ID)
	v := viewOf(rec)
	v.Token = token.Reveal()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, v)
}

func (g *Gateway) listKeys(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	tenant := r.URL.Query().Get("tenant")
	if tenant != "" {
		if err := ValidateTenant(tenant); err != nil {
			writeError(w, http.StatusBadRequest, codeInvalid, "tenant: "+err.Error())
			return
		}
	}
	if p.Role != RoleAdmin {
		if tenant != "" && tenant != p.Tenant {
			writeError(w, http.StatusForbidden, codeForbidden, "a tenant-admin sees its own tenant's keys only")
			return
		}
		tenant = p.Tenant
	}
	recs := g.keys.list(tenant)
	slices.SortFunc(recs, func(a, b KeyRecord) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := make([]keyView, len(recs))
	for i, rec := range recs {
		out[i] = viewOf(rec)
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": out})
}

func (g *Gateway) revokeKey(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	id := r.PathValue("id")
	if len(id) != keyIDLen || !isHex(id) {
		writeError(w, http.StatusBadRequest, codeInvalid, "key id in path: must be 16 hex digits")
		return
	}
	notFound := func() { writeError(w, http.StatusNotFound, codeNotFound, fmt.Sprintf("no key %q", id)) }
	for range 5 { // compare-and-set: another gateway may revoke it meanwhile
		rec, rev, err := g.keys.get(r.Context(), id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			notFound()
			return
		}
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "reading the key: "+err.Error())
			return
		}
		if p.Role != RoleAdmin && rec.Tenant != p.Tenant {
			notFound() // another tenant's key is not there for a tenant-admin
			return
		}
		if rec.RevokedAt != nil {
			writeJSON(w, http.StatusOK, viewOf(rec))
			return
		}
		rec, err = g.keys.revoke(r.Context(), rec, rev, p.ID, time.Now().UTC().Truncate(time.Millisecond))
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue // the revision moved: read it again
		}
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the key was not revoked: "+err.Error())
			return
		}
		g.cfg.Logger.Info("gateway: key revoked", "key", id, "by", p.ID)
		writeJSON(w, http.StatusOK, viewOf(rec))
		return
	}
	writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the key changed while it was being revoked; try again")
}
