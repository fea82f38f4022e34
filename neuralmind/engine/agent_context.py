"""What each agent hook event gets pushed: one function per event over a Workspace.

The same functions answer inside the warm server (on its engine thread, through
`EngineService.agent_hook`) and in a hook process without a server (over the on-disk
index), so an agent sees the same text either way. Learning from hook events is not
here: the server feeds its live sessions, a lone hook process writes the journal
(`agent_journal.py`).

Each event's text is assembled from parts that are one engine call each:
`directives_block` (memory's standing directives), `memory_lines` (memory recall, with the
prompt's code hits for its code-aware boost) and `review_block` (`Workspace.review`).
The events that push files (prompt, search) are answers like any other: stamped with
their freshness (#17), and a line says so when the files may be out of date.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neuralmind.config import (
    HOOK_MIN_PROMPT_TERMS,
    HOOK_PROMPT_FILES,
    HOOK_PROMPT_MEMORY,
    HOOK_SEARCH_FILES,
    MAX_QUESTION_CHARS,
    QUERY_HITS,
)
from neuralmind.context.prompt_index import ranked_files, render_prompt_index
from neuralmind.context.tokens import count_tokens
from neuralmind.engine.freshness import unfresh_note
from neuralmind.errors import EngineError
from neuralmind.hookwire import COMPACT, EDIT, PROMPT, SEARCH, SESSION_START, STOP, HookRequest
from neuralmind.index.tokens import code_tokens
from neuralmind.review.report import render_text

if TYPE_CHECKING:
    from neuralmind.context.pack import RankedHit
    from neuralmind.engine.workspace import Workspace

log = logging.getLogger("neuralmind.engine")

# Words of a grep/glob pattern worth searching for: identifiers, not regex or glob syntax.
_PATTERN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_PATTERN_NOISE = frozenset({"def", "class", "function", "import", "from", "return", "const",
                            "let", "var", "self", "this", "true", "false", "null", "none"})
_EXTENSION = re.compile(r"\.([A-Za-z0-9]{1,5})\b")
# Conversation, not a task: a prompt made only of these (and stopwords) retrieves noise.
_CHAT_WORDS = frozenset(["yes", "yeah", "yep", "no", "nope", "ok", "okay", "sure", "thanks", "thank", "please", "go", "on", "continue", "proceed", "next", "again", "good", "great", "fine", "nice", "cool", "perfect", "right", "now", "let", "just", "also", "done", "looks", "sound", "sounds", "do", "it", "that", "this", "stop", "wait", "hi", "hello", "hey", "agree", "agreed", "lgtm", "ship"])


# --- the parts ---------------------------------------------------------------------------------
def _has_memory(ws: Workspace) -> bool:
    return (ws.learned / "memory.db").is_file()     # never create a store from a hook


def directives_block(ws: Workspace) -> str:
    """The standing directives (pinned preference atoms), the rules an agent must keep
    across sessions and compactions ("" without any)."""
    if not _has_memory(ws):
        return ""
    try:
        return str(ws.directives()["text"])
    except Exception as e:  # memory fails open: the rest of the push is still worth it
        log.info("directives unavailable to the hook: %s", e)
        return ""


def memory_lines(ws: Workspace, question: str, hits: Sequence[RankedHit] | None = None
                 ) -> list[str]:
    """One line per memory atom `question` recalls (decisions among them; an INVALIDATED
    one never), with its id so the agent can rate or open it. `hits`: the code the prompt
    already retrieved, standing for recall's own code search. The atoms pushed count as
    served (exposure, so what only hooks ever show can still be archived once rated noise),
    never as pending feedback: the agent did not ask, and a push must not withhold its
    next recall."""
    if not _has_memory(ws):
        return []
    try:
        result = ws.recall(question, session=None, record=False, code_hits=hits)
    except Exception as e:  # memory fails open: the file index is still worth pushing
        log.info("memory unavailable to the prompt hook: %s", e)
        return []
    out: list[str] = []
    shown: list[str] = []
    for h in result.hits:
        if h.status == "INVALIDATED":
            continue
        a = h.atom
        files = sorted({t.partition("::")[0] for t in a.about})[:3]
        where = f" ({', '.join(files)})" if files else ""
        flag = f" [{h.status}]" if h.status == "STALE" else ""
        out.append(f"{a.type} {a.id[:8]}{flag}: {a.label}{where}")
        shown.append(a.id)
        if len(out) == HOOK_PROMPT_MEMORY:
            break
    ws.memory.pushed(shown)
    return out


def review_block(ws: Workspace, files: list[str]) -> str:
    """What the files a turn changed may have missed (#17's review of the pending change,
    narrowed to this turn's files): files that usually change with them but were not
    touched, and the decisions they put at risk. "" when there is nothing to act on: at
    a Stop, any text makes the agent go on working."""
    turn = set(files)
    try:
        out = ws.review().to_json()
    except EngineError as e:            # outside git, or git failing: nothing to review
        log.info("no review for the stop hook: %s", e)
        return ""
    out["missing"] = [m for m in out["missing"]
                      if any(b["changed_file"] in turn for b in m["because"])]
    out["decisions_at_risk"] = [d for d in out["decisions_at_risk"] if d["file"] in turn]
    if not out["missing"] and not out["decisions_at_risk"]:
        return ""
    return ("NeuralMind's review of the files this turn changed:\n" + render_text(out) +
            "\nCheck these before you finish, or say why they do not apply.")


# --- the events --------------------------------------------------------------------------------
def session_start(ws: Workspace, req: HookRequest) -> str:
    """The wake-up pack: identity and map, and memory's block (the standing directives,
    open loops, active hubs, stale decisions on recently edited files)."""
    return ws.wakeup().context


def task_terms(prompt: str) -> set[str]:
    """The prompt's search terms that are not conversation ("yes, go on", "thanks")."""
    return {t for t in code_tokens(prompt) if t not in _CHAT_WORDS}


@dataclass
class Pushed:
    """A hook's answer that names files (prompt, search): its text, the question, the files
    the text names (best first), the hit ids a prompt learns as its question's answer, and
    the answer's JSON with its freshness stamp (`answer`; None when nothing was pushed)."""

    text: str = ""
    question: str = ""
    files: list[str] = field(default_factory=list)
    hit_ids: list[str] = field(default_factory=list)
    answer: dict[str, Any] | None = None


def stamp_pushed(ws: Workspace, pushed: Pushed, view: dict[str, Any] | None) -> str:
    """Stamp the pushed files like every answer (`view`: the work tree as the server knows
    it; None: ask git now, as the CLI does); the line to add when they may be out of date."""
    out: dict[str, Any] = {"files": [{"file": f} for f in pushed.files],
                           "tokens": count_tokens(pushed.text)}
    pushed.answer = ws.stamp_answer(out, **(ws.work_tree_now() if view is None else view))
    return unfresh_note(pushed.answer)


def prompt_answer(ws: Workspace, req: HookRequest, view: dict[str, Any] | None = None,
                  ) -> Pushed:
    """The prompt's index (see `prompt`), stamped, with its top hits' node ids, which the
    caller records as the question's hits so the edits that follow are learned as its
    answer. A note on pending or stale files is paid for out of the budget."""
    question = req.prompt.strip()[:MAX_QUESTION_CHARS]
    if question.startswith("/") or len(task_terms(question)) < HOOK_MIN_PROMPT_TERMS:
        return Pushed()
    budget = req.budget or ws.config.hook_budget
    hits, files, _, _ = ws._rank(question, QUERY_HITS)
    memory = memory_lines(ws, question, hits)
    text = render_prompt_index(ws.root, hits, files, memory, question, budget)
    pushed = Pushed(text, question, _named(text, ranked_files(hits, files)),
                    [h.node.id for h in hits[:HOOK_PROMPT_FILES]])
    if text and (note := stamp_pushed(ws, pushed, view)):
        text = render_prompt_index(ws.root, hits, files, memory, question,
                                   budget - count_tokens(note) - 1)
        pushed.text = f"{text}\n{note}" if text else ""
    return pushed


def _named(text: str, files: list[tuple[str, list[str]]]) -> list[str]:
    """The ranked files the text lists (a budget may leave the last ones out)."""
    listed = {line[2:].split(": ", 1)[0] for line in text.splitlines() if line.startswith("- ")}
    return [f for f, _ in files if f in listed]


def prompt(ws: Workspace, req: HookRequest) -> str:
    """The files and memory the prompt needs, one line each, and the top hit's key lines."""
    return prompt_answer(ws, req).text


def pattern_question(pattern: str) -> str:
    """The words of a grep regex or a glob worth a search ("" when there are none)."""
    words = [w for w in _PATTERN_WORD.findall(_EXTENSION.sub(" ", pattern))
             if w.lower() not in _PATTERN_NOISE]
    return " ".join(dict.fromkeys(words))


def search_answer(ws: Workspace, req: HookRequest, view: dict[str, Any] | None = None,
                  ) -> Pushed:
    """Beside a grep/glob: the files the engine ranks first for the same words, stamped."""
    question = pattern_question(req.pattern)[:MAX_QUESTION_CHARS]
    if not question:
        return Pushed()
    hits, ranked, _, _ = ws._rank(question, QUERY_HITS)
    files = ranked_files(hits, ranked, HOOK_SEARCH_FILES)
    if not files:
        return Pushed()
    rows = [f"- {f}" + (f": {', '.join(symbols)}" if symbols else "") for f, symbols in files]
    pushed = Pushed(f"NeuralMind's best files for `{question}`:\n" + "\n".join(rows),
                    question, [f for f, _ in files])
    if note := stamp_pushed(ws, pushed, view):
        pushed.text += f"\n{note}"
    return pushed


def search(ws: Workspace, req: HookRequest) -> str:
    """Beside a grep/glob: the files the engine ranks first for the same words."""
    return search_answer(ws, req).text


def compact(ws: Workspace, req: HookRequest) -> str:
    """Before a compaction: the directives, so the rules survive it."""
    return directives_block(ws)


def stop(ws: Workspace, req: HookRequest) -> str:
    """At the end of a turn that changed files: the review of those files."""
    if req.stop_active or not req.files:
        return ""
    return review_block(ws, req.files)


def edit(ws: Workspace, req: HookRequest) -> str:
    """Edits only teach (the caller records them); nothing to say."""
    return ""


HANDLERS: dict[str, Callable[[Workspace, HookRequest], str]] = {
    SESSION_START: session_start, PROMPT: prompt, SEARCH: search, EDIT: edit,
    COMPACT: compact, STOP: stop,
}


def answer(ws: Workspace, req: HookRequest) -> str:
    """The text for one hook event ("" when there is nothing worth adding)."""
    return HANDLERS[req.event](ws, req)
