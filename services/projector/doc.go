// Package projector will reduce the session log into Pebble read models and
// answer queries over them; every model is rebuildable from the log (DESIGN §6).
// It is not built yet: `cairn projector` says so and exits 1.
package projector
