"""The code graph: tree-sitter extraction, cross-file resolution, communities, the SQLite IR store."""
