"""Whether the search index is behind the stored graph, and catching it up in memory.

A server commits the graph at every save (one SQLite transaction) but writes the search
index only once saves pause (`SearchIndex.flush`, `keyword_flush.py`: seconds later, and
~10 s of writing on the Linux kernel). A process killed in between (kill -9, an editor
crash, power loss) leaves an index older than its graph, and a reader that trusted it
answered without the saved symbols and said nothing. Two records close that gap:

- `search_meta.json` keeps the token of the graph generation the keyword side was written
  for (`SearchIndex.graph_token`); every save gives the graph a new token, so a reader
  knows the index is behind by comparing it with the stored graph's (one SQLite row).
- `saves.journal` lists the files a server saved since its last keyword write (one JSON
  string a line, appended before the save's graph is committed; `save_journal.py`), so the
  reader re-indexes those files' nodes only. Without it (an index from before the journal,
  a build killed between its graph and its index) every node's keyword text is compared:
  1.2 s on Django's 42k nodes (RELIABILITY.md).

A reader catches up in memory only: a running server may hold saves it has not written,
and the next writer (a build, the server's next flush) writes what it holds. The caught-up
nodes' vectors wait in the pending list, as after any keyword-only update.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from neuralmind.index.symbol_rank import node_path

if TYPE_CHECKING:
    from neuralmind.graph.graph import Graph
    from neuralmind.index.search_index import SearchIndex

log = logging.getLogger("neuralmind.index")


def catch_up(index: SearchIndex, stored_token: str | None, load_graph: Callable[[], Graph],
             ) -> int:
    """Bring the keyword side of `index` up to the stored graph, in memory; returns the
    nodes looked at (0: it was current). `load_graph` is called only when it is behind."""
    journal = index.journal.paths()
    lost = index.node_count == 0        # no keyword side loaded (see below)
    if not journal and not lost and (stored_token is None
                                     or index.graph_token in (None, stored_token)):
        return 0            # current (or from before tokens were kept: nothing to compare)
    graph = load_graph()
    if not graph.files:
        return 0
    t0 = time.perf_counter()
    defer, index.defer_writes = index.defer_writes, True    # a reader never writes it
    try:
        # `lost`: a keyword base and metadata that disagree are not loaded (a process killed
        # between the two files' replacements); the journal's files alone would leave the
        # rest of the graph unsearchable, so every node is compared, as after a killed build
        if journal and not lost:    # every file committed since the index was written
            files = set(journal)
            ids = sorted({i for i in index.node_ids() if node_path(i) in files}
                         | {n.id for p in files for n in graph.nodes_by_file(p)})
            index.update(graph, changed_node_ids=ids, embed=False)
            looked = len(ids)
        else:           # a build stopped between its graph and its index: every node
            index.update(graph, embed=False)
            looked = len(graph.nodes)
    finally:
        index.defer_writes = defer
    # (from the journal: also a reader while a server has saves it has not written yet)
    (log.info if journal else log.warning)(
        "the search index was behind the graph (saves or a build not written to it yet, or "
        "a process stopped before writing them); %d nodes re-indexed in memory in %.1f s; "
        "the language server or `neuralmind build` writes it", looked, time.perf_counter() - t0)
    return looked

