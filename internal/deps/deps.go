// Package deps pins the modules that packages under construction will use, so
// that `go mod tidy` keeps them while several parts are built side by side.
// It is removed once every listed module is imported by real code.
package deps

import (
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/cockroachdb/pebble/v2"
	_ "github.com/nats-io/nats-server/v2/server"
	_ "github.com/nats-io/nats.go/jetstream"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "golang.org/x/sync/errgroup"
)
