"""`search_meta.json`: each indexed node's name and keyword-text hash, the pending list,
and the token of the graph generation the keyword side was written for (`index/generation.py`).

Read and written member by member (`jsonstream.py`): 148 MB on the Linux kernel, and a
reloading server keeps serving meanwhile. Node ids are interned, shared with the graph
and the other indexes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from neuralmind.index.jsonstream import members, read_slices, write_object

FORMAT_VERSION = 1


def read_meta(path: Path) -> tuple[dict[str, str], dict[str, bytes], set[str], str | None]:
    """(id -> lowercased name, id -> keyword-text hash as bytes, pending ids, graph token);
    all empty when the file is absent, damaged or of another format (the index is then
    rebuilt). The token is None in files written before it was kept."""
    names: dict[str, str] = {}
    kw_hash: dict[str, bytes] = {}
    pending: set[str] = set()
    graph_token: str | None = None
    # one string per distinct name (the exact-name map's keys are these too): JSON decodes
    # a string per node, and the Linux kernel's 835k nodes share far fewer names
    shared: dict[str, str] = {}
    try:
        fmt = None
        for key, value in members(read_slices(path), stream=frozenset({"nodes"})):
            if key == "format":
                fmt = value
            elif key == "pending":
                pending = set(value)
            elif key == "graph":
                graph_token = str(value)
            elif key == "nodes" and fmt == FORMAT_VERSION:
                for k, v in value:
                    k = sys.intern(k)
                    names[k], kw_hash[k] = shared.setdefault(v[0], v[0]), bytes.fromhex(v[1])
            elif key == "nodes":
                break
        if fmt == FORMAT_VERSION:
            return names, kw_hash, pending, graph_token
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        pass
    return {}, {}, set(), None


def write_meta(path: Path, names: dict[str, str], kw_hash: dict[str, bytes],
               pending: set[str], graph_token: str) -> None:
    head = json.dumps({"format": FORMAT_VERSION, "pending": sorted(pending), "graph": graph_token},
                      separators=(",", ":"), ensure_ascii=False)
    write_object(path, head[:-1] + ',"nodes":',
                 ((i, [names[i], h.hex()]) for i, h in kw_hash.items()))
