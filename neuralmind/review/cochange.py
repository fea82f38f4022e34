"""How often files changed together: commits from git history, editing sessions the synapse
layer learned. Each source answers, for one file, how many of its events there were and how
many of those also touched each partner: the counts a review shows ("14 of 17 commits")."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from neuralmind.config import COCHANGE_MAX_COMMITS
from neuralmind.synapse.seeding import cochange, git_commits

if TYPE_CHECKING:
    from neuralmind.synapse.layer import SynapseLayer


class CoChange(Protocol):
    """One source of co-change counts."""

    source: str   # what one event is: "commits" or "sessions"

    def counts(self, file: str) -> tuple[int, dict[str, int]]:
        """(events touching `file`, {partner: events touching both})."""
        ...

    def events(self, file: str) -> int:
        """Events touching `file` (its popularity: breaks ties between partners)."""
        ...


class CommitHistory:
    """Co-change in the last COCHANGE_MAX_COMMITS non-merge commits reachable from a base
    commit (commits touching more than COCHANGE_MAX_FILES files are left out, as at seeding:
    they are reformatting or vendoring, not association)."""

    source = "commits"

    def __init__(self, commits: list[list[str]], root: Path) -> None:
        pairs, freq = cochange(commits, root)
        self.freq: Counter[str] = freq
        self.partners: dict[str, Counter[str]] = defaultdict(Counter)
        for (a, b), n in pairs.items():
            self.partners[a][b] = n
            self.partners[b][a] = n

    @classmethod
    def from_git(cls, root: Path, base: str) -> CommitHistory:
        """The history up to `base` (a full sha); empty when git cannot answer."""
        return cls(git_commits(root, COCHANGE_MAX_COMMITS, rev=base) or [], root)

    def counts(self, file: str) -> tuple[int, dict[str, int]]:
        return self.freq.get(file, 0), dict(self.partners.get(file, {}))

    def events(self, file: str) -> int:
        return self.freq.get(file, 0)


class SessionHistory:
    """Co-change in the editing sessions learned from this workspace (synapse counts)."""

    source = "sessions"

    def __init__(self, layer: SynapseLayer) -> None:
        self.layer = layer

    def counts(self, file: str) -> tuple[int, dict[str, int]]:
        return self.layer.session_counts(file)

    def events(self, file: str) -> int:
        return self.layer.session_counts(file)[0]
