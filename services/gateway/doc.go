// Package gateway will serve Cairn's HTTP API: commands, queries and live
// events over SSE (DESIGN §7). It is not built yet: `cairn gateway` says so and
// exits 1.
package gateway
