// Package lint holds the project's structural rules as tests: pkg/ never
// imports services/, no service imports another, production code never
// imports testing, every package states what it guarantees in its doc, and
// no test sleeps or paces a poll with time.After (they use
// internal/kittest.Eventually).
package lint
