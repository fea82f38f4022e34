"""Which repository a folder is, and what git says about it now.

Foundation for freshness and shared memory, below every component: `git` (running
git safely, the git dir of a work tree or linked worktree, HEAD, the change set,
the files two commits differ in), `identity` (first commit plus remote: the same
for every worktree and clone of one repository) and `learned` (where the memory
learned about a repository lives, shared by its worktrees).
"""
