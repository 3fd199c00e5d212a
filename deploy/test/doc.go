// Package test validates deploy/compose.yaml with the compose-spec Go library
// (github.com/compose-spec/compose-go/v2), the loader Docker Compose uses. It
// is its own module so the main module does not carry the library; run it
// with `make compose-test`. There is no container engine on the development
// machine, so this test is also what checks the Dockerfile: that the build
// targets compose.yaml names exist in deploy/Dockerfile.
package test
