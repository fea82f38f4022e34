"""What an agent hook pushes with a prompt: a rank-ordered index, one line per item.

The full context pack (`pack.py`) is what an agent pulls; this is the push, paid on
every turn, so it is an index rather than the code: the files the prompt needs (the
engine's file ranking, best first, each with the symbols that matched), the memory lines (decisions, atoms) that
bear on it, and the best hit's key lines so the agent can often act without opening a
file. Everything fits the per-turn budget; a part that does not fit is left out whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from neuralmind.config import HOOK_KEY_LINES, HOOK_PROMPT_FILES, HOOK_RELATIVE_FLOOR
from neuralmind.context.layers import (
    Piece,
    fill,
    node_label,
    query_token_set,
    relevant_lines,
    render_snippet,
    source_lines,
)
from neuralmind.context.pack import RankedHit
from neuralmind.context.tokens import count_tokens
from neuralmind.index.file_rank import RankedFile

HEADER = "NeuralMind: files for this prompt, best first (read these before searching):"
MEMORY_HEADER = "Memory that bears on it:"
SYMBOLS_PER_FILE = 3
SNIPPET_SHARE = 0.5        # the top hit's lines take at most this share of the budget


def ranked_files(hits: Sequence[RankedHit], files: Sequence[RankedFile],
                 limit: int = HOOK_PROMPT_FILES) -> list[tuple[str, list[str]]]:
    """(file, the symbols of it that matched), best file first (the engine's file ranking);
    files scoring under HOOK_RELATIVE_FLOOR of the top one are left out."""
    floor = files[0].score * HOOK_RELATIVE_FLOOR if files else 0.0
    out: dict[str, list[str]] = {f.file: [] for f in files[:limit] if f.score >= floor}
    for h in hits:
        symbols = out.get(h.node.file)
        if symbols is not None and h.node.kind != "file" and len(symbols) < SYMBOLS_PER_FILE:
            label = node_label(h.node)
            if label not in symbols:
                symbols.append(label)
    return list(out.items())


def top_hit(hits: Sequence[RankedHit], best_file: str | None) -> RankedHit | None:
    """The hit whose lines are shown: the best symbol of the best file (a whole file's
    lines say less than its best-matching function's)."""
    in_file = [h for h in hits if h.node.file == best_file] if best_file else list(hits)
    return next((h for h in in_file if h.node.kind != "file"), in_file[0] if in_file else None)


def top_hit_lines(root: Path, hit: RankedHit, question: str, budget: int) -> str:
    """The best hit's location and its most relevant lines, within `budget` tokens."""
    n = hit.node
    head = f"Top hit: `{n.file}:{n.start_line}-{n.end_line}` {node_label(n)} ({n.kind})"
    lines = source_lines(root, n.file)
    numbers = relevant_lines(lines, n, query_token_set(question), HOOK_KEY_LINES)
    while numbers:
        text = f"{head}\n```\n{render_snippet(lines, numbers)}\n```"
        if count_tokens(text) <= budget:
            return text
        numbers = numbers[:-1]
    return head if count_tokens(head) <= budget else ""


def render_prompt_index(root: Path, hits: Sequence[RankedHit], files: Sequence[RankedFile],
                        memory: Sequence[str], question: str, budget: int) -> str:
    """The index for `question` in at most `budget` tokens ("" when nothing was found)."""
    if not files and not memory:
        return ""
    best = top_hit(hits, files[0].file if files else None)
    snippet = top_hit_lines(root, best, question, int(budget * SNIPPET_SHARE)) if best else ""
    left = budget - count_tokens(snippet) - (1 if snippet else 0)
    rows = [Piece(f"- {f}" + (f": {', '.join(symbols)}" if symbols else ""))
            for f, symbols in ranked_files(hits, files)]
    index, kept = fill(HEADER, rows, left) if rows else ("", [])
    left -= count_tokens(index) + (1 if index else 0)
    notes, _ = fill(MEMORY_HEADER, [Piece(f"- {m}") for m in memory], left) if memory else ("", [])
    return "\n".join(part for part in (index, notes, snippet if kept else "") if part)
