"""The team brain: learned memory and indexes shared across a team's machines through
PostgreSQL.

Local changes to shared state are written to a SQLite outbox in the same transaction
as the local write; a sync task pushes them as append-only, idempotent events
`(repo, author, seq, kind, payload)` and pulls everyone's events by sequence (LISTEN/
NOTIFY wakes it). Every machine folds the same events into the same shared state,
whatever order they arrive in. Index snapshots let a fresh clone start from a
teammate's graph and index of its nearest ancestor commit.

Modules, bottom up: `identity` (which repository), `dsn` (connection strings, secrets),
`pg_schema` (server tables and migrations), `remote` (the PostgreSQL side: push,
fetch, listen, snapshots), `outbox` (the local outbox), `fold` (deterministic merge
maths), `local` (the local mirror: replicated log, shared synapse state, record
versions), `sync` (push + pull, and the long-lived task), `snapshots` (publish/pull of
graph and index), `settings` (`team_dsn` in .neuralmind.toml), `service` (what the CLI
and servers call).
"""
