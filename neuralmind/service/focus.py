"""Focus: the files a person is looking at, which a running build embeds first.

Three sources, most telling first: the files the last questions ranked best (what
someone wants to understand now), the files open in the editor, and the files being
edited with the files near them (same folder, import neighbours: what a change is
likely to touch next). The list is capped (MAX_ATTENTION_FILES) and handed to the
background build whenever it changes (`index/embed_order.py` reads it before every
slice), so a question asked during a cold index turns semantic within seconds, not
at the end of the build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from neuralmind.config import MAX_ATTENTION_FILES

QUESTION_FILES = 5          # of each answer's file ranking, the files that join


class Focus:
    """Ordered, de-duplicated files of interest; `changed(files)` after every change."""

    def __init__(self, changed: Callable[[list[str]], None]) -> None:
        self._changed = changed
        self._asked: list[str] = []
        self._open: dict[str, None] = {}
        self._edited: list[str] = []
        self._near: list[str] = []
        self._last: list[str] = []

    def files(self) -> list[str]:
        merged = dict.fromkeys([*self._asked, *reversed(self._open), *self._edited, *self._near])
        return list(merged)[:MAX_ATTENTION_FILES]

    def asked(self, ranked_files: Iterable[str]) -> None:
        """A question was answered: its best files lead (the latest question first)."""
        top = list(ranked_files)[:QUESTION_FILES]
        self._asked = list(dict.fromkeys([*top, *self._asked]))[:MAX_ATTENTION_FILES]
        self._publish()

    def opened(self, rel: str) -> None:
        self._open.pop(rel, None)
        self._open[rel] = None
        self._publish()

    def closed(self, rel: str) -> None:
        if rel in self._open:
            del self._open[rel]
            self._publish()

    def is_edited(self, rel: str) -> bool:
        return rel in self._edited

    def edited(self, rel: str, near: Iterable[str] = ()) -> None:
        """`rel` is being edited; `near`: the files around it (`engine/coverage.py`)."""
        self._edited = list(dict.fromkeys([rel, *self._edited]))[:MAX_ATTENTION_FILES]
        self._near = list(dict.fromkeys([*near, *self._near]))[:MAX_ATTENTION_FILES]
        self._publish()

    def _publish(self) -> None:
        files = self.files()
        if files != self._last:
            self._last = files
            self._changed(files)
