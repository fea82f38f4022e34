"""PathSuffixes: the files an import written as a path tail reaches, with a file name
shared by many paths (`__init__.py`) looked up by its last two parts."""

from __future__ import annotations

import random

from neuralmind.config import SUFFIX_GROUP_SPLIT_OVER
from neuralmind.graph.import_rules import ImportRules
from neuralmind.graph.model import FileExtract, Reference
from neuralmind.graph.path_suffixes import PathSuffixes


def _definition(paths: list[str], tail: str) -> list[str]:
    return sorted((p for p in paths if p == tail or p.endswith("/" + tail)),
                  key=lambda p: (len(p), p))


def _tree(rng: random.Random) -> list[str]:
    """Packages enough to split `__init__.py` and `models.py`; shared directory names at
    several depths, top-level files, a file named like a directory."""
    names = ["app", "core", "models", "db", "x", "utils", "tests", "a"]
    paths = {"__init__.py", "setup.py", "models.py", "a/models.py", "models/models.py"}
    for _ in range(4 * SUFFIX_GROUP_SPLIT_OVER):
        parts = [rng.choice(names) for _ in range(rng.randint(1, 5))]
        paths.add("/".join(parts) + "/__init__.py")
        paths.add("/".join(parts) + "/" + rng.choice(["models.py", "views.py", "db.py"]))
    return sorted(paths)


def test_matches_are_the_definitions_for_every_tail() -> None:
    rng = random.Random(15)
    paths = _tree(rng)
    assert sum(p.endswith("__init__.py") for p in paths) > SUFFIX_GROUP_SPLIT_OVER
    index = PathSuffixes(set(paths))
    tails = {"__init__.py", "models.py", "nothere.py", "models/__init__.py"}
    for p in paths:                 # every suffix of every path, and near misses
        parts = p.split("/")
        for i in range(len(parts)):
            tails.add("/".join(parts[i:]))
            tails.add("q" + "/".join(parts[i:]))
        tails.add("zz/" + parts[-1])
    for tail in sorted(tails):
        assert index.matches(tail) == _definition(paths, tail), tail


def test_from_package_import_subpackage_among_many_packages() -> None:
    """`from a.b import c` reaches `a/b/c/__init__.py`, found among more `__init__.py` than
    the split threshold (the case that scanned them all on every new file's save)."""
    files = [f"pkg{i}/sub/__init__.py" for i in range(2 * SUFFIX_GROUP_SPLIT_OVER)]
    files += ["src/proj/app/__init__.py", "src/proj/app/views/__init__.py",
              "src/proj/app/views/list.py", "other/app/views/__init__.py", "main.py"]
    extracts = {p: FileExtract(p, "python", "", [], [], []) for p in files}
    rules = ImportRules(extracts)
    ref = Reference("main.py", "imports", "proj.app", 1, names=[("views", "views")])
    assert rules.resolve_import("main.py", ref).files == ["src/proj/app/views/__init__.py"]
