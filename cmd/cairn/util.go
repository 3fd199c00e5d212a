package main

import (
	"os"
	"strings"

	"github.com/cairn-agents/cairn/pkg/events"
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// cliSession is how the commands that read NATS directly name session r:
// its id for the default tenant, <tenant>.<id> for any other.
func cliSession(r events.SessionRef) string {
	if r.Tenant == events.DefaultTenant {
		return r.ID
	}
	return r.String()
}

// parseCLISession reads a session named as [cliSession] does.
func parseCLISession(s string) (events.SessionRef, error) {
	if strings.Contains(s, ".") {
		return events.ParseSessionRef(s)
	}
	r := events.DefaultRef(s)
	return r, r.Validate()
}
