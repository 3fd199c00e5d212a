// Package telemetrytest holds the end-to-end tests of Cairn's telemetry:
// they run real services (the orchestrator in the test process, the
// toolrunner in a child process re-executed from the test binary) on an
// embedded NATS server, receive their traces on a real OTLP/HTTP endpoint in
// the test, scrape every service's /metrics, and check that a trace follows
// a prompt across the NATS hop and that no secret reaches spans, metric
// labels or log lines. The package has no API; it exists for its tests.
package telemetrytest
