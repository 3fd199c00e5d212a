package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/cairn-agents/cairn/pkg/client"
	"github.com/cairn-agents/cairn/pkg/events"
)

// GET /sessions/{id}/verify checks a session's hash chain on the server,
// for the session page's audit button: pkg/client's VerifySession over the
// gateway's own /v1 records route, sent with the caller's credential, so
// the route's role check and tenancy decide what may be read.

// handlerTransport sends a request through an http.Handler in process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	w := &bufferWriter{header: http.Header{}, status: http.StatusOK}
	t.h.ServeHTTP(w, r)
	return &http.Response{StatusCode: w.status, Status: http.StatusText(w.status), Header: w.header,
		Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: r,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// bufferWriter is a ResponseWriter that keeps the response in memory.
type bufferWriter struct {
	header http.Header
	body   bytes.Buffer
	status int
	wrote  bool
}

func (w *bufferWriter) Header() http.Header { return w.header }
func (w *bufferWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.body.Write(b)
}
func (w *bufferWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
}

// verification is the JSON the page gets.
type verification struct {
	Session    string           `json:"session"`
	OK         bool             `json:"ok"`
	Entries    int              `json:"entries"`
	LastDigest string           `json:"lastDigest,omitempty"`
	Problems   []client.Problem `json:"problems"`
}

func (c *Console) verify(w http.ResponseWriter, r *http.Request) {
	secure(w)
	id := r.PathValue("id")
	if !sessionIDs.MatchString(id) {
		writeJSONError(w, http.StatusBadRequest, "a session id is 1-64 characters of A-Z a-z 0-9 _ -")
		return
	}
	tok, ok := Token(r)
	if !ok {
		writeJSONError(w, http.StatusUnauthorized, "not logged in")
		return
	}
	opts := []client.Option{client.WithToken(tok), client.WithHTTPClient(&http.Client{Transport: handlerTransport{c.cfg.API}})}
	if t := r.URL.Query().Get("tenant"); t != "" {
		if err := events.ValidateTenant(t); err != nil {
			writeJSONError(w, http.StatusBadRequest, "tenant: "+err.Error())
			return
		}
		opts = append(opts, client.WithTenant(t))
	}
	cl, err := client.New("http://console.invalid", opts...)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, err.Error())
		return
	}
	v, err := cl.VerifySession(r.Context(), id)
	if err != nil {
		status := http.StatusBadGateway
		var ae *client.Error
		if errors.As(err, &ae) {
			status = ae.Status
		}
		writeJSONError(w, status, err.Error())
		return
	}
	out := verification{Session: id, OK: v.OK(), Entries: v.Entries, LastDigest: v.LastDigest, Problems: v.Problems}
	if out.Problems == nil {
		out.Problems = []client.Problem{}
	}
	writeJSON(w, http.StatusOK, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // after the header: nothing left to tell the client
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]map[string]string{"error": {"message": msg}})
}
