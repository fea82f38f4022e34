"""The team brain: learned memory and indexes shared across a team's machines through
PostgreSQL.

Local changes to shared state are written to a SQLite outbox in the same transaction
as the local write, in the store that made them (`neuralmind.outbox`); a sync task
collects them into the local mirror, pushes them as append-only, idempotent events
`(repo, author, seq, kind, payload)` and pulls everyone's events by sequence (LISTEN/
NOTIFY wakes it). Every machine folds the same events into the same shared state,
whatever order they arrive in, and writes it back into the stores that show it (the
synapse layer's `shared` namespace; the memory store's decisions and team-visible atoms,
whose versions are all kept and whose current view is the latest in the store's order). Index snapshots let a fresh clone start from a
teammate's graph and index of its nearest ancestor commit.

Modules, bottom up: `identity` (which repository), `dsn` (connection strings, secrets),
`pg_schema` (server tables and migrations), `remote` (the PostgreSQL side: push,
fetch, listen, snapshots), `fold` (deterministic merge maths), `events` (payloads),
`tables` (team.db's schema), `records` (record versions), `local` (the local mirror:
push queue, replicated log, shared state), `views` (what changed, for the stores),
`compaction` (keeping team.db bounded), `bridge` (the synapse store <-> the mirror),
`sync` (collect + push + pull, and the long-lived task), `snapshots` (publish/pull of
graph and index), `settings` (`team_dsn` in .neuralmind.toml), `service` (what the
engine offers).
"""
