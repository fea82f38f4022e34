"""The observatory: a browser page, served by the warm process's loopback endpoint at
/observatory, that shows the brain at work (graph, questions, memory, decisions, dreams,
savings, a debug trace) and lights up with the live event stream (`neuralmind.events`).

Stdlib only at import (the editor's process loads it with the endpoint); the page is the
built bundle in `static/`, from the TypeScript app in `web/`.
"""
