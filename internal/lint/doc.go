// Package lint holds the project's structural rules as tests: pkg/ never
// imports services/, no service imports another, production code never
// imports testing, every package states what it guarantees in its doc, and
// no test sleeps or paces a poll with time.After (they use
// internal/kittest.Eventually), and no production code outside pkg/events
// spells a stream, bucket or subject pattern name by hand (events.Names
// owns them).
package lint
