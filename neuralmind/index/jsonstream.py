"""Big JSON objects written and read one member at a time.

The keyword index files are ~20 MB of JSON on Django. One `json.dumps`/`json.loads`
call holds the GIL for its whole run (~1 s to write, ~0.3 s to read), which freezes
the language server's event loop although the work runs on another thread. Encoding
or decoding member by member does the same work in small C calls, so the loop runs
in between; the bytes on disk are exactly what one call would write.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from neuralmind.statedir import atomic_writer

_SPACE = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()


CHUNK_CHARS = 1 << 18     # written in pieces of ~256 KB: no whole copy of 30 MB in memory


def read_text(path: Path, slice_bytes: int = 1 << 20) -> str:
    """The file's UTF-8 text, decoded a slice at a time: one decode of Django's keyword
    index held the GIL ~45 ms (a stall of the server's event loop); slices let other
    threads in between. Raises OSError, or UnicodeDecodeError (a ValueError)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    parts: list[str] = []
    with path.open("rb") as f:
        while chunk := f.read(slice_bytes):
            parts.append(decoder.decode(chunk))
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


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
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    parts = [prefix, "{"]
    size = 0
    first = True
    for key, value in items:
        member = dumps(key) + ":" + dumps(value)
        parts.append(member if first else "," + member)
        first = False
        size += len(member)
        if size >= CHUNK_CHARS:
            yield "".join(parts)
            parts, size = [], 0
    parts += ("}", suffix)
    yield "".join(parts)


def members(text: str, pos: int = 0, *, stream: frozenset[str] = frozenset()
            ) -> Iterator[tuple[str, Any]]:
    """(key, value) of the JSON object starting at `pos` (after whitespace). A member
    named in `stream` whose value is an object comes as an iterator over its own
    members, to be consumed before the next member. ValueError when malformed."""
    return _members(text, pos, [pos], stream)


def _members(text: str, pos: int, end: list[int], stream: frozenset[str]
             ) -> Iterator[tuple[str, Any]]:
    """As `members`; `end[0]` is set past the object once it is consumed."""
    pos = _skip(text, pos)
    if text[pos:pos + 1] != "{":
        raise ValueError(f"expected an object at {pos}")
    pos = _skip(text, pos + 1)
    if text[pos:pos + 1] == "}":
        end[0] = pos + 1
        return
    while True:
        key, pos = _decoder.raw_decode(text, pos)
        if not isinstance(key, str):
            raise ValueError(f"expected a key at {pos}")
        pos = _skip(text, pos)
        if text[pos:pos + 1] != ":":
            raise ValueError(f"expected ':' at {pos}")
        pos = _skip(text, pos + 1)
        if key in stream and text[pos:pos + 1] == "{":
            inner = [pos]
            yield key, _members(text, pos, inner, frozenset())
            pos = inner[0]
        else:
            value, pos = _decoder.raw_decode(text, pos)
            yield key, value
        pos = _skip(text, pos)
        sep = text[pos:pos + 1]
        if sep == "}":
            end[0] = pos + 1
            return
        if sep != ",":
            raise ValueError(f"expected ',' or '}}' at {pos}")
        pos = _skip(text, pos + 1)


def _skip(text: str, pos: int) -> int:
    m = _SPACE.match(text, pos)
    return m.end() if m else pos
