// Package composetest runs deploy/compose.yaml for real (build tag
// compose; `make compose-smoke`, part of `make test`): the images of `make
// images`, a 3-node NATS cluster with TLS and a user per service, two
// orchestrators, three toolrunners, two compactors, the projector and the
// gateway, each container on the compose network with its own address.
// Sessions run through the gateway with the admin key of
// deploy/.secrets/admin.key (`make compose-secrets`, never in an image);
// every session's log is then checked with internal/invariants and its hash
// chain verified client-side. TestComposeChaos (`make chaos`, and `make
// chaos-short` in `make test`) does the same for many sessions while
// containers are killed, paused and cut off, and prints a FIGURES line
// (docs/operations.md, "The chaos test"). The project is always torn down
// (down -v), also when the test fails.
//
// # Guarantees
//
// The test fails when a service does not come up, an acknowledged command
// is not applied exactly once, a tool call lacks exactly one result, a
// chain is broken, or a session does not settle before the deadline.
package composetest
