"""Decisions: the atoms of type `decision`, with their git anchoring and staleness scans."""
