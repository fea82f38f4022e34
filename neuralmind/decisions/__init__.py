"""Decision memory: records with their rationale, search, git staleness."""
