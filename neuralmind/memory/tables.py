"""The memory.db schema as DDL: the current one (2) and the one it migrates from (1)."""

from __future__ import annotations

SCHEMA_VERSION = 2

# Every atom (a decision, lesson, preference, fact, note or open loop) is one `atoms` row;
# a decision's own fields (status, anchor, alternatives, evidence) extend it in
# `decision_records`. Hubs are named topics; `edges` are typed links from an atom to an
# atom, a file or a symbol (`about`: a decision's governed files and symbols are its
# `about` edges to them).
TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS atoms (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,      -- insertion order, and the FTS rowid
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,                        -- decision, lesson, preference, fact, note, open_loop
    label TEXT NOT NULL,
    text TEXT NOT NULL,
    state TEXT NOT NULL,                       -- proposed, active, ignored, archived, rejected
    pinned INTEGER NOT NULL DEFAULT 0,
    author TEXT NOT NULL,
    source TEXT NOT NULL,                      -- who wrote it: cli, mcp:<client>, lsp, dream, ...
    created_at TEXT NOT NULL,                  -- ISO-8601 UTC from here on
    updated_at TEXT NOT NULL,
    useful_at TEXT,                            -- last `useful` verdict: decay counts from it
    closed_at TEXT,                            -- an open loop that was closed
    served INTEGER NOT NULL DEFAULT 0,         -- times surfaced to an agent
    used INTEGER NOT NULL DEFAULT 0,           -- verdicts
    useful INTEGER NOT NULL DEFAULT 0,
    noise INTEGER NOT NULL DEFAULT 0,
    proposed_head TEXT                         -- git HEAD when proposed (promotion counts from it)
);
CREATE INDEX IF NOT EXISTS atoms_type_state ON atoms(type, state);
CREATE TABLE IF NOT EXISTS hubs (
    name TEXT PRIMARY KEY,
    synonyms TEXT NOT NULL DEFAULT '[]',       -- JSON list
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS atom_hubs (
    atom_id TEXT NOT NULL,
    hub TEXT NOT NULL,
    ord INTEGER NOT NULL,
    PRIMARY KEY (atom_id, hub)
);
CREATE INDEX IF NOT EXISTS atom_hubs_hub ON atom_hubs(hub);
CREATE TABLE IF NOT EXISTS edges (
    src TEXT NOT NULL,                         -- an atom id
    kind TEXT NOT NULL,                        -- supersedes, derived_from, caused_by, consolidates, about
    dst_type TEXT NOT NULL,                    -- atom, file or symbol
    dst TEXT NOT NULL,                         -- atom id, repo-relative path, or path::Qualified.name
    ord INTEGER NOT NULL DEFAULT 0,
    origin TEXT NOT NULL,                      -- user, or dream (a consolidation pass made it)
    created_at TEXT NOT NULL,
    PRIMARY KEY (src, kind, dst_type, dst)
);
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst_type, dst);
CREATE TABLE IF NOT EXISTS decision_records (
    atom_id TEXT PRIMARY KEY,
    decision_type TEXT NOT NULL,
    status TEXT NOT NULL,                      -- ACTIVE, STALE, INVALIDATED (orthogonal to rank)
    commit_sha TEXT,
    rejected_alternatives TEXT NOT NULL,       -- JSON lists from here on
    evidence TEXT NOT NULL,
    confidence REAL NOT NULL,
    anchored_at TEXT NOT NULL,                 -- when the decision was recorded or restored
    depends_on TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decision_records_status ON decision_records(status);
CREATE TABLE IF NOT EXISTS decision_fingerprints (
    decision_id TEXT NOT NULL,
    path TEXT NOT NULL,
    blob TEXT NOT NULL,
    PRIMARY KEY (decision_id, path)
);
CREATE TABLE IF NOT EXISTS atom_vectors (
    atom_id TEXT PRIMARY KEY,
    text_hash TEXT NOT NULL,                   -- of the embedded text (refresh only on change)
    vector BLOB NOT NULL                       -- float32, L2-normalised
);
CREATE TABLE IF NOT EXISTS pending (           -- surfaced to an agent session, not rated yet
    atom_id TEXT NOT NULL,
    session TEXT NOT NULL,
    served_at REAL NOT NULL,                   -- epoch seconds of the memory clock
    PRIMARY KEY (atom_id, session)
);
CREATE TABLE IF NOT EXISTS ratings (           -- every verdict, append-only
    atom_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    session TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ratings_atom ON ratings(atom_id);
CREATE VIEW IF NOT EXISTS decisions AS
    SELECT a.seq, a.id, a.label AS title, a.text AS rationale, d.decision_type, d.status,
           d.commit_sha,
           (SELECT json_group_array(dst) FROM (SELECT dst FROM edges WHERE src = a.id
                AND kind = 'about' AND dst_type = 'file' ORDER BY ord)) AS files_affected,
           (SELECT json_group_array(dst) FROM (SELECT dst FROM edges WHERE src = a.id
                AND kind = 'about' AND dst_type = 'symbol' ORDER BY ord)) AS symbols_affected,
           d.rejected_alternatives, d.evidence, d.confidence,
           (SELECT json_group_array(hub) FROM (SELECT hub FROM atom_hubs WHERE atom_id = a.id
                ORDER BY ord)) AS tags,
           a.author, a.created_at, a.updated_at, d.anchored_at, d.depends_on
    FROM atoms a JOIN decision_records d ON d.atom_id = a.id;
CREATE VIEW IF NOT EXISTS decision_vectors AS
    SELECT v.atom_id AS decision_id, v.text_hash, v.vector
    FROM atom_vectors v JOIN decision_records d ON d.atom_id = v.atom_id;
"""
FTS_TABLE = ("CREATE VIRTUAL TABLE IF NOT EXISTS atoms_fts USING fts5("
             "label, hubs, text, tokenize='unicode61 remove_diacritics 2')")
# The decisions' full-text index as schema v1 named it: their rows of atoms_fts.
FTS_VIEW = ("CREATE VIEW IF NOT EXISTS decisions_fts AS SELECT f.rowid AS rowid, f.label AS title, "
            "f.text AS rationale, f.atoms_fts AS decisions_fts FROM atoms_fts f "
            "JOIN atoms a ON a.seq = f.rowid WHERE a.type = 'decision'")


# Schema 1 as NeuralMind <= 0.1 created it (kept to read damaged old files and for the tests).
V1_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    rationale TEXT NOT NULL,
    decision_type TEXT NOT NULL,
    status TEXT NOT NULL,
    commit_sha TEXT,
    files_affected TEXT NOT NULL,
    symbols_affected TEXT NOT NULL,
    rejected_alternatives TEXT NOT NULL,
    evidence TEXT NOT NULL,
    confidence REAL NOT NULL,
    tags TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    anchored_at TEXT NOT NULL,
    depends_on TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_status ON decisions(status);
CREATE TABLE IF NOT EXISTS decision_fingerprints (
    decision_id TEXT NOT NULL,
    path TEXT NOT NULL,
    blob TEXT NOT NULL,
    PRIMARY KEY (decision_id, path)
);
CREATE TABLE IF NOT EXISTS decision_vectors (
    decision_id TEXT PRIMARY KEY,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL
);
"""
V1_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS decisions_fts USING fts5("
          "title, rationale, tokenize='unicode61 remove_diacritics 2')")
