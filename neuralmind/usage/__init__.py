"""Retrieval scored by use: what each answer returned, and what of it was used.

`store` keeps every answer (LSP context, MCP query, search or recall, CLI query) with
the files it returned, and credits them as they are opened, edited and kept (still
changed at the next commit); `report` turns that into the savings report (answers,
tokens served against the whole codebase's, files used per answer, precision@5 by use).
The engine settles answers and feeds what they teach to the synapse layer.
"""
