"""Big JSON objects written and read one member at a time.

The search metadata is ~8 MB of JSON on Django (148 MB on the Linux kernel; the keyword
index itself is flat arrays now, `postings.py`). One `json.dumps`/`json.loads`
call holds the GIL for its whole run (~1 s to write, ~0.3 s to read), which freezes
the language server's event loop although the work runs on another thread. Encoding
or decoding member by member does the same work in small C calls, so the loop runs
in between; the bytes on disk are exactly what one call would write. Reading never
holds the whole text as one string either: decoding 32 MB of UTF-8, or joining it,
is itself one 30-45 ms call.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from neuralmind.statedir import atomic_writer

_SPACE = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()


CHUNK_CHARS = 1 << 18     # written in pieces of ~256 KB: no whole copy of 30 MB in memory
CHUNK_MEMBERS = 2048      # members encoded per call (~2 ms of GIL each; see `_chunks`)


def read_slices(path: Path, slice_bytes: int = 1 << 20) -> Iterator[str]:
    """The file's UTF-8 text, decoded lazily a slice at a time. The file is read at
    once (OSError here); a UnicodeDecodeError (a ValueError) comes while iterating."""
    data = path.read_bytes()
    return _decoded(data, slice_bytes)


def _decoded(data: bytes, slice_bytes: int) -> Iterator[str]:
    decoder = codecs.getincrementaldecoder("utf-8")()
    for start in range(0, len(data), slice_bytes):
        yield decoder.decode(data[start:start + slice_bytes])
    yield decoder.decode(b"", final=True)


def write_object(path: Path, prefix: str, items: Iterable[tuple[str, Any]],
                 suffix: str = "}") -> None:
    """Atomically replace `path` with `prefix` + a JSON object of `items` + `suffix`,
    streamed to a temporary file (readers see the old or the new file, never a mix)."""
    with atomic_writer(path) as f:
        for chunk in _chunks(prefix, items, suffix):
            f.write(chunk.encode("utf-8"))


def object_bytes(prefix: str, items: Iterable[tuple[str, Any]], suffix: str = "}") -> bytes:
    """What `write_object` writes, as bytes (compact JSON, non-ASCII kept, UTF-8)."""
    return "".join(_chunks(prefix, items, suffix)).encode("utf-8")


def _chunks(prefix: str, items: Iterable[tuple[str, Any]], suffix: str) -> Iterator[str]:
    """The text in pieces; `items`' keys are distinct (an object's members). They are
    encoded CHUNK_MEMBERS at a time, as one dict: one C call holding the GIL ~2 ms, where
    two calls a member (the Linux kernel's 835k) cost 3x the CPU in Python overhead, all
    of it beside a server's saves (KERN11: the metadata's JSON was half the writer's GIL)."""
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    parts = [prefix, "{"]
    size = 0
    first = True
    items = iter(items)
    while batch := dict(islice(items, CHUNK_MEMBERS)):
        members = dumps(batch)[1:-1]
        parts.append(members if first else "," + members)
        first = False
        size += len(members)
        if size >= CHUNK_CHARS:
            yield "".join(parts)
            parts, size = [], 0
    parts += ("}", suffix)
    yield "".join(parts)


def members(text: str | Iterable[str], *, stream: frozenset[str] = frozenset()
            ) -> Iterator[tuple[str, Any]]:
    """(key, value) of the JSON object that `text` (a string, or its slices in order)
    holds. A member named in `stream` whose value is an object comes as an iterator over
    its own members, to be consumed before the next member. ValueError when malformed."""
    cursor = _Cursor(iter((text,)) if isinstance(text, str) else iter(text))
    return _members(cursor, stream)


def _members(cur: _Cursor, stream: frozenset[str]) -> Iterator[tuple[str, Any]]:
    if cur.peek() != "{":
        raise ValueError(f"expected an object at {cur.offset}")
    cur.take()
    if cur.peek() == "}":
        cur.take()
        return
    while True:
        key = cur.decode()
        if not isinstance(key, str):
            raise ValueError(f"expected a key at {cur.offset}")
        if cur.peek() != ":":
            raise ValueError(f"expected ':' at {cur.offset}")
        cur.take()
        if key in stream and cur.peek() == "{":
            inner = _members(cur, frozenset())
            yield key, inner
            for _ in inner:   # whatever the caller left unread
                pass
        else:
            yield key, cur.decode()
        sep = cur.peek()
        if sep == "}":
            cur.take()
            return
        if sep != ",":
            raise ValueError(f"expected ',' or '}}' at {cur.offset}")
        cur.take()


class _Cursor:
    """A position in a JSON text that arrives in slices; keeps only the unread part."""

    def __init__(self, slices: Iterator[str]) -> None:
        self._slices = slices
        self._buf = ""
        self._pos = 0
        self._dropped = 0        # characters consumed and let go (for error offsets)
        self._done = False

    @property
    def offset(self) -> int:
        return self._dropped + self._pos

    def _extend(self, at_least: int) -> bool:
        """Read slices until `at_least` unread characters are buffered; False at the end.
        Asked for twice what failed to decode, a big value costs O(its size), not O(n²)."""
        added = []
        have = len(self._buf) - self._pos
        while have < at_least and not self._done:
            try:
                piece = next(self._slices)
            except StopIteration:
                self._done = True
                break
            added.append(piece)
            have += len(piece)
        if not added:
            return False
        self._dropped += self._pos
        self._buf = "".join([self._buf[self._pos:], *added])
        self._pos = 0
        return True

    def peek(self) -> str:
        """The next non-space character ("" at the end), not consumed."""
        while True:
            m = _SPACE.match(self._buf, self._pos)
            self._pos = m.end() if m else self._pos
            if self._pos < len(self._buf) or not self._extend(1):
                return self._buf[self._pos:self._pos + 1]

    def take(self) -> None:
        self._pos += 1

    def decode(self) -> Any:
        """The JSON value at the cursor. One that fails, or ends exactly where the buffer
        does (a number may go on), is decoded again with more text."""
        self.peek()
        while True:
            try:
                value, end = _decoder.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as e:
                if self._extend(2 * (len(self._buf) - self._pos) + 1):
                    continue
                raise ValueError(f"{e.msg} at {self._dropped + e.pos}") from None
            if end < len(self._buf) or not self._extend(len(self._buf) - self._pos + 1):
                self._pos = end
                return value
