"""Which repository a checkout is, for the team store: its first commit plus its remote.

The identity is the foundation's (`neuralmind.repo.identity`): the team store, and the
learned memory every worktree of a repository shares, name a repository the same way.
"""

from __future__ import annotations

from neuralmind.repo.identity import RepoIdentity, normalise_remote, repo_identity

__all__ = ["RepoIdentity", "normalise_remote", "repo_identity"]
