"""Which repository a checkout is: its first commit plus its remote.

Every worktree and clone of one repository has the same identity whatever its path or
branch, so what was learned in one is found from the others (and, for the team store,
by other developers); a fork with another remote, or an unrelated project that happens
to use the same remote name, does not. The remote is normalised so that
`git@host:team/app.git`, `ssh://git@host/team/app` and `https://user:token@host/team/app`
are the same repository (and no credential is ever stored).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from neuralmind.errors import EngineError
from neuralmind.repo.git import run_git

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")
KEY_CHARS = 20      # hex digits of the key: 80 bits, no collision among one user's repositories


@dataclass(frozen=True, slots=True)
class RepoIdentity:
    first_commit: str
    remote: str  # normalised (host/path, lower-case host), "" when the clone has no remote

    def to_json(self) -> dict[str, str]:
        return {"first_commit": self.first_commit, "remote": self.remote}

    @property
    def key(self) -> str:
        """A stable file-name-safe key for this identity."""
        raw = f"{self.first_commit}\n{self.remote}".encode()
        return hashlib.sha256(raw).hexdigest()[:KEY_CHARS]


def normalise_remote(url: str) -> str:
    """`host/path` without scheme, user, password, port, `.git` suffix or trailing '/'.

    Local paths (a remote that is another folder) are kept as given: they are only
    meaningful on one machine anyway."""
    u = url.strip()
    if not u:
        return ""
    if "://" in u:
        parts = urlsplit(u)
        if parts.scheme == "file":
            return u
        host = (parts.hostname or "").lower()   # the port is transport, not identity
        path = parts.path
    else:
        m = _SCP_LIKE.match(u)
        if not m or u.startswith(("/", ".")):
            return u
        host, path = m.group(1).lower(), m.group(2)
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}"


def repo_identity(root: Path) -> RepoIdentity:
    """The identity of the git repository at `root`; EngineError("not_a_repository") when
    there is none yet (no commit), or when a shallow clone hides the first commit."""
    root = Path(root)
    shallow = run_git(root, "rev-parse", "--is-shallow-repository")
    if shallow is None:
        raise EngineError("not_a_repository", f"{root} is not a git repository")
    if shallow.strip() == "true":
        raise EngineError("not_a_repository",
                          f"{root} is a shallow clone: its first commit is unknown "
                          "(run `git fetch --unshallow`)")
    roots = run_git(root, "rev-list", "--max-parents=0", "HEAD")
    first = sorted((roots or "").split())
    if not first:
        raise EngineError("not_a_repository", f"{root} has no commit yet")
    return RepoIdentity(first[0], normalise_remote(remote_url(root)))


def remote_url(root: Path) -> str:
    """`origin`'s URL, else the first remote's (sorted), else ''."""
    names = (run_git(root, "remote") or "").split()
    if not names:
        return ""
    name = "origin" if "origin" in names else sorted(names)[0]
    return (run_git(root, "remote", "get-url", name) or "").strip()
