// Package projector reduces the session log (stream CAIRN_SESSIONS) into read
// models in one Pebble database and answers queries over them (DESIGN §6–7).
// Every model can be rebuilt from the log: [Rebuild] recreates them from
// sequence 1 and gives, key for key, what the live projector holds at the
// same sequence. The key layout is in docs/read-models.md; the queries in
// docs/api/projector-queries.md.
//
// A [Projector] is built with [New] from a [Config] and runs with
// [Projector.Run]; [Projector.Handler] serves the queries (the gateway mounts
// it) and [Projector.OpsHandler] adds /healthz, /readyz and /metrics
// (internal/opshttp).
//
// While it runs, [Projector.StartRebuild] rebuilds it online (online.go): a
// fresh database beside the live one (Config.Dir + ".rebuild") is filled
// from sequence 1 while queries are answered from the live one, then the
// projector switches over to it between two batches and it takes the live
// one's place at Config.Dir. [Projector.RebuildStatus] follows it, and the
// admin routes of Handler (admin.go) serve both, with the live digest.
//
// # Ordering
//
// One durable pull consumer delivers entries in stream order. They are applied
// in that order, in batches of up to Config.BatchSize: a batch takes what has
// arrived, so under light load entries are applied one by one and under heavy
// load in full batches.
//
// # Durability
//
// Each batch is one Pebble batch holding the models' changes and the stream
// sequence of its last entry: after any crash the database holds every batch
// up to some point and nothing of the ones after. On start the projector reads
// that sequence and resumes after it; if the consumer's state disagrees (it
// acknowledged more than the database holds) the consumer is recreated at the
// right sequence. Entries at or below the applied sequence are ignored, so a
// redelivery is never applied twice. Batches are committed without fsync:
// the log is the source of truth, so losing the last batches to a machine
// crash only means applying them again. A crash during an online rebuild
// leaves the live database in use; [New] removes the partial one, or, if
// the crash fell between the switch-over's two renames, finishes it.
//
// # Concurrency
//
// Run must be called once. Handlers are safe for concurrent use while Run
// runs; each query reads one consistent snapshot of the database. A query is
// answered whole from the live database or, after a switch-over, from the
// rebuilt one: the switch-over waits up to 30 s for the queries in progress
// (else it is given up) and holds new ones until the rebuilt database is
// open. One online rebuild runs at a time, on a goroutine Run owns and waits
// for.
//
// # Errors
//
// Run retries its setup (finding the stream, creating the consumer) every
// second until it succeeds, logging why it waits. It returns nil when its
// context ends, or an error it cannot get past once running (Pebble, or a
// consumer that cannot be read). An entry that does not decode does not stop the
// projector: it is recorded under bad/ and counted in
// cairn_projector_bad_entries_total.
package projector
