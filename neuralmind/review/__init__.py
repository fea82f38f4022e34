"""Review of a pending change: the files that usually change with it but were not touched, and
the decisions it puts at risk (`neuralmind review`, MCP `neuralmind_review`, the editor's
diagnostics). `Workspace.review` composes it; see `report.review`."""
