"""The `neuralmind` command line: one module per command group, each a thin adapter."""
