// Package kittest is the shared test kit: the few helpers every package's
// tests need, written once.
//
//   - [Eventually] waits for a condition by polling on a ticker with a
//     deadline. Tests never sleep and never poll with a bare time.After
//     (internal/lint enforces it): they wait for the state they need.
//   - [Run] runs a service's Run(ctx) for the length of a test, and on stop
//     or cleanup cancels it and fails the test unless Run returned nil or
//     context.Canceled.
//   - [Main] is a TestMain: it re-executes the test binary as a named child
//     process when [Command] asked for one (the way tests kill and restart a
//     real service), and otherwise runs the tests and then fails the binary
//     if any goroutine outlived them (go.uber.org/goleak).
//
// Like net/http/httptest, it is imported only by tests.
package kittest
