// Package lint holds the project's structural rules as tests: pkg/ never
// imports services/, no service imports another, production code never
// imports testing, and every package states what it guarantees in its doc.
package lint
