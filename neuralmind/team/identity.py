"""Which repository a checkout is, for the team store: its first commit plus its remote.

Two clones of one repository share the identity whatever their paths or branches, so
their events and snapshots meet; a fork with another remote, or an unrelated project
that happens to use the same remote name, does not. The remote is normalised so that
`git@host:team/app.git`, `ssh://git@host/team/app` and `https://user:token@host/team/app`
are the same repository (and no credential ever reaches the database).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from neuralmind.errors import EngineError

GIT_TIMEOUT = 30.0
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")


@dataclass(frozen=True, slots=True)
class RepoIdentity:
    first_commit: str
    remote: str  # normalised (host/path, lower-case host), "" when the clone has no remote

    def to_json(self) -> dict[str, str]:
        return {"first_commit": self.first_commit, "remote": self.remote}


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


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EngineError("not_a_repository", f"git is not usable in {root}: {e}") from None


def repo_identity(root: Path) -> RepoIdentity:
    """The identity of the git repository at `root`; EngineError when there is none yet
    (no commit), or when a shallow clone hides the first commit."""
    root = Path(root)
    shallow = _git(root, "rev-parse", "--is-shallow-repository")
    if shallow.returncode != 0:
        raise EngineError("not_a_repository",
                          f"{root} is not a git repository: the team store identifies a "
                          "repository by its first commit and its remote")
    if shallow.stdout.strip() == "true":
        raise EngineError("not_a_repository",
                          f"{root} is a shallow clone: its first commit is unknown "
                          "(run `git fetch --unshallow`)")
    roots = _git(root, "rev-list", "--max-parents=0", "HEAD")
    first = sorted(roots.stdout.split())
    if roots.returncode != 0 or not first:
        raise EngineError("not_a_repository", f"{root} has no commit yet")
    return RepoIdentity(first[0], normalise_remote(_remote_url(root)))


def _remote_url(root: Path) -> str:
    """`origin`'s URL, else the first remote's (sorted), else ''."""
    names = _git(root, "remote").stdout.split()
    if not names:
        return ""
    name = "origin" if "origin" in names else sorted(names)[0]
    out = _git(root, "remote", "get-url", name)
    return out.stdout.strip() if out.returncode == 0 else ""
