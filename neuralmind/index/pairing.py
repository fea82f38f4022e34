"""Which source files a test file exercises: by naming convention, then by the graph.

A change to `x.go` usually changes `x_test.go` too; a question about a behaviour needs
the code that implements it and the test that pins it. Tests rarely win on their own
evidence (their text repeats fixtures and assertions, not the words of a change
request), so the file ranking places each test just below the source it exercises.

Conventions, per language family (the core name is what the test is named after):

    Python      test_x.py, x_test.py, tests/test_x.py, tests/pkg/test_x.py
    Go          x_test.go (same package folder)
    Rust        tests/x.rs, tests/x/mod.rs (integration tests of src/x.rs)
    JS / TS     x.test.ts, x.spec.js, __tests__/x.js, test/x.ts, test/x/y.js -> x
    any         a folder under the test root names the module: test/request/host.js
                exercises lib/request.js when no lib/host.js exists
    any         a name that only a package folder holds (its __init__.py, mod.rs or
                index.js, or no such file) names the package: the test exercises the
                folder's files it references, most referenced first
                (tests/protocols/test_http.py -> uvicorn/protocols/http/h11_impl.py)

A test that matches no source file by name is paired by the graph: the source files
its symbols call, import or inherit from, by how many references (at least
`PAIR_MIN_REFS`, so one helper import is not a pairing).
"""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from neuralmind.config import PAIR_MIN_REFS, TEST_PATHS_KEPT
from neuralmind.index.tokens import stem

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "e2e"})
# Go's rules too: a `testdata/` folder holds test fixtures (the go tool skips it), and
# `x.pb.go` is protoc's generated code.
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|testdata)/|(^|/)test_[^/]*$|_test\.\w+$"
    r"|\.(spec|test)\.\w+$|(^|/)conftest\.py$")
_GENERATED_PATH = re.compile(r"_pb2(_grpc)?\.py$|\.pb(\.gw)?\.go$|\.generated\.|(^|/)generated/"
                             r"|\.min\.js$")
_CODE_EXT = re.compile(r"\.(py|pyi|go|rs|js|jsx|mjs|cjs|ts|tsx|java|kt|rb|php|cs|c|cc|cpp|h|hpp"
                       r"|swift|scala|lua|ex|exs)$")
_GENERIC = frozenset({"mod", "index", "main", "lib", "init", "__init__", "conftest", "util",
                      "utils", "helper", "helpers", "common", "fixture", "fixtures", "setup"})


@functools.lru_cache(maxsize=TEST_PATHS_KEPT)
def is_test_path(path: str) -> bool:
    """Tests, fixtures and generated code: files a change request is rarely about alone.
    Memoised: every answer asks it of the same ranked files again (symbols, files, the
    learned step's candidates)."""
    return bool(_TEST_PATH.search(path)) or bool(_GENERATED_PATH.search(path))


def _stem_of(base: str) -> str:
    name = base.rsplit(".", 1)[0] if "." in base else base
    for suffix in (".test", ".spec", "_test", "_spec", ".tests"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.startswith("test_"):
        name = name[5:]
    return name


@functools.lru_cache(maxsize=1 << 14)
def _key(name: str) -> str:
    """Names compare case-, separator- and plural-insensitively (Attribute.rs ~ attributes).
    Memoised: pairs are computed again after every structural save, over every file name."""
    return stem(_SEPARATORS.sub("", name.lower()))


_SEPARATORS = re.compile(r"[-_.]")
_GENERIC_KEYS = frozenset(_key(g) for g in _GENERIC)


def subject_names(test_path: str) -> list[str]:
    """What a test file is named after, most specific first: its core name, then the
    folders between the test root and the file (test/request/host.js -> host, request)."""
    parts = test_path.split("/")
    names = [_stem_of(parts[-1])]
    dirs = parts[:-1]
    root = max((i for i, d in enumerate(dirs) if d in _TEST_DIRS), default=-1)
    names += reversed(dirs[root + 1:])
    return [n for n in dict.fromkeys(names) if n and n not in _GENERIC]


def _shared_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


def pair_tests(files: Iterable[str], references: Iterable[tuple[str, str]] = ()
               ) -> dict[str, list[str]]:
    """test file -> the source files it exercises, best first.

    `references` are (source file, target file) pairs, one per resolved reference
    (call, import, inheritance) between symbols of the two files."""
    files = [f for f in files if _CODE_EXT.search(f)]
    sources = [f for f in files if not is_test_path(f)]
    by_key: dict[str, list[str]] = defaultdict(list)
    by_folder: dict[str, list[str]] = defaultdict(list)
    for f in sources:
        base = f.rsplit("/", 1)[-1]
        key = _key(_stem_of(base))
        parent = f.split("/")[-2] if "/" in f else ""
        if key in _GENERIC_KEYS:   # x/mod.rs, x/index.js: named by the folder
            key = _key(parent) if parent else key
        by_key[key].append(f)
        if parent:
            by_folder[_key(parent)].append(f)
    refs: dict[str, Counter[str]] = defaultdict(Counter)
    source_set = set(sources)
    for a, b in references:
        if a != b and b in source_set:
            refs[a][b] += 1
    out: dict[str, list[str]] = {}
    for t in files:
        if not is_test_path(t) or t in source_set:
            continue
        paired: list[str] = []
        for name in subject_names(t):
            cands = by_key.get(_key(name), [])
            if all(_is_package_marker(c) for c in cands):
                members = _package_sources(by_folder.get(_key(name), []), refs[t])
                if members:
                    paired += sorted(members, key=lambda s: (-refs[t][s], -_shared_prefix(s, t), s))
                    break
            paired += sorted(cands, key=lambda s: (-_shared_prefix(s, t), -refs[t][s], s))
            if paired:
                break
        if not paired:
            paired = [s for s, n in refs[t].most_common() if n >= PAIR_MIN_REFS][:3]
        if paired:
            out[t] = list(dict.fromkeys(paired))
    return out


def _is_package_marker(path: str) -> bool:
    """x/__init__.py, x/mod.rs, x/index.js: a file named by its folder."""
    return _key(_stem_of(path.rsplit("/", 1)[-1])) in _GENERIC_KEYS


def _package_sources(members: Sequence[str], refs: Counter[str]) -> list[str]:
    """The files of a package folder a test named after the package references. Why: a
    package's marker file is often empty (uvicorn's protocols/http/__init__.py), so a test
    paired with it alone was never lifted by the modules the package's changes touch
    (h11_impl.py, httptools_impl.py); its references say which of them it exercises."""
    return [s for s in members if refs[s]]


class PairIndex:
    """`pairs` read the other way, for the file ranking's per-question loops: the tests
    of each source (in `pairs` order) and each test's place in `pairs`. Scanning every
    pair once per question cost ~1-2 ms of each answer at Django's 20k nodes (the learned
    step scans them twice more); a question ranks a few hundred files, and only their
    tests can move. `chained`: some test's sources name
    another test (never in `pair_tests`' pairs), where the loops' result depends on the
    tests met before: callers then scan every pair in order, as before."""

    def __init__(self, pairs: Mapping[str, Sequence[str]]) -> None:
        self.pairs = pairs
        self.position = {t: i for i, t in enumerate(pairs)}
        self.by_source: dict[str, list[str]] = {}
        for test, sources in pairs.items():
            for s in dict.fromkeys(sources):
                self.by_source.setdefault(s, []).append(test)
        self.chained = any(s in pairs for s in self.by_source)

    def tests_of(self, files: Iterable[str]) -> list[str]:
        """The tests with a source among `files`, in `pairs` order."""
        found = {t for f in files for t in self.by_source.get(f, ())}
        return sorted(found, key=self.position.__getitem__)


_index_lock = threading.Lock()
_last_index: list[PairIndex] = []


def pair_index(pairs: Mapping[str, Sequence[str]]) -> PairIndex:
    """The `PairIndex` of `pairs`, made once per pairs object: a server's pairs are one
    dict per graph generation (`context/retrieve.source_pairs`), never changed once made,
    so the last one is kept (one entry: ~0.1 MB at Django's 20k nodes)."""
    with _index_lock:
        if _last_index and _last_index[0].pairs is pairs:
            return _last_index[0]
    index = PairIndex(pairs)
    with _index_lock:
        _last_index[:] = [index]
    return index
