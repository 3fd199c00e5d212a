package gateway

import (
	_ "embed"
	"net/http"
)

// openAPI is the API description served at /v1/openapi.json. A test checks it
// against the routes the gateway serves.
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	writeBody(w, openAPI)
}
