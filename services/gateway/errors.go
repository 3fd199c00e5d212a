package gateway

import (
	"encoding/json"
	"net/http"
)

// Error codes of the API's error body.
const (
	codeInvalid        = "invalid_request"
	codeNotFound       = "not_found"
	codeRejected       = "rejected"
	codeUnavailable    = "unavailable"
	codeTimeout        = "timeout"
	codeInternal       = "internal"
	codeNotImplemented = "not_implemented"
	codeTooLarge       = "too_large"
)

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]apiError{"error": {Code: code, Message: msg}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // after the header: statusWriter keeps the error, instrument logs it
}

// writeBody writes b after the header is sent. A failed write cannot be
// reported to the client; statusWriter keeps the error and instrument logs
// it, so handlers have nothing to do with it.
func writeBody(w http.ResponseWriter, b []byte) {
	_, _ = w.Write(b)
}
