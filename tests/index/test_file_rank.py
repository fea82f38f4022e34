"""The file ranking end to end: a real multi-language repository built with the engine
(tree-sitter graph, real model, BM25 and vectors on disk), test<->source pairing, the
interleaved symbol hits and the `files` field of a query's JSON."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from sample_workspace import built_workspace

from neuralmind.config import LEARNED_CANDIDATE_DEPTH
from neuralmind.context.retrieve import source_pairs
from neuralmind.engine import Workspace
from neuralmind.index.file_rank import (
    FileEvidence,
    FileRankParams,
    RankedFile,
    candidate_features,
    fuse,
    interleave,
    learned_rank,
    rank_files,
    scaled_as_documentation,
)
from neuralmind.index.pairing import is_test_path, pair_tests, subject_names
from neuralmind.index.query import is_locate_question, parse_question
from neuralmind.index.tokens import code_tokens

FILES = {
    "README.md": """
        # Shipyard

        Shipyard schedules container deployments: retries, rollbacks and health checks.
        Deployments retry with exponential backoff; rollbacks restore the last release.
    """,
    "deploy/retry.go": """
        package deploy

        // Backoff returns how long to wait before the next deployment attempt.
        func Backoff(attempt int) int {
            delay := 1 << attempt
            if delay > 64 {
                delay = 64
            }
            return delay
        }
    """,
    "deploy/retry_test.go": """
        package deploy

        import "testing"

        func TestBackoffIsCapped(t *testing.T) {
            if Backoff(10) != 64 {
                t.Fatal("backoff must be capped")
            }
        }
    """,
    "deploy/rollback.go": """
        package deploy

        // Rollback restores the previous release when a health check fails.
        func Rollback(release string, previous string) string {
            if release == "" {
                return previous
            }
            return previous
        }
    """,
    "deploy/health.go": """
        package deploy

        // Healthy reports whether every probe of a release answered in time.
        func Healthy(probes []int, limit int) bool {
            for _, p := range probes {
                if p > limit {
                    return false
                }
            }
            return true
        }
    """,
    "web/src/banner.ts": """
        /** Renders the deployment status banner shown on the dashboard. */
        export function renderBanner(status: string): string {
          return `<div class="banner">${status}</div>`;
        }
    """,
    "web/src/banner.test.ts": """
        import { renderBanner } from "./banner";

        test("the banner shows the status", () => {
          expect(renderBanner("ok")).toContain("ok");
        });
    """,
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return built_workspace(tmp_path_factory.mktemp("shipyard"), FILES)


def test_pairing_follows_each_languages_conventions() -> None:
    files = ["src/pkg/routing.py", "tests/test_routing.py", "tests/pkg/test_routing.py",
             "mux.go", "mux_test.go", "src/attribute.rs", "tests/attributes.rs",
             "source/core/ky.ts", "test/ky.test.ts", "lib/request.js", "test/request/host.js",
             "src/app.js", "src/__tests__/app.js", "lib/util.js", "tests/conftest.py"]
    pairs = pair_tests(files)
    assert pairs["tests/test_routing.py"] == ["src/pkg/routing.py"]
    assert pairs["tests/pkg/test_routing.py"] == ["src/pkg/routing.py"]
    assert pairs["mux_test.go"] == ["mux.go"]
    assert pairs["tests/attributes.rs"] == ["src/attribute.rs"]      # plural and folder
    assert pairs["test/ky.test.ts"] == ["source/core/ky.ts"]
    assert pairs["test/request/host.js"] == ["lib/request.js"]        # named by its folder
    assert pairs["src/__tests__/app.js"] == ["src/app.js"]
    assert "tests/conftest.py" not in pairs                           # a fixture file
    assert not any(is_test_path(s) for srcs in pairs.values() for s in srcs)
    assert subject_names("test/request/host.js") == ["host", "request"]


def test_go_fixtures_and_generated_code_are_not_sources() -> None:
    assert is_test_path("testdata/protoexample/test.pb.go")
    assert is_test_path("render/testdata/template.html")
    assert is_test_path("api/v1/service.pb.go") and is_test_path("api/v1/service.pb.gw.go")
    assert not is_test_path("render/render.go") and not is_test_path("protobuf.go")


def test_pairing_falls_back_to_what_the_test_references() -> None:
    files = ["lib/engine.js", "lib/helpers.js", "test/smoke.js"]
    refs = [("test/smoke.js", "lib/engine.js")] * 3 + [("test/smoke.js", "lib/helpers.js")]
    assert pair_tests(files, refs)["test/smoke.js"] == ["lib/engine.js"]
    # one reference is not a pairing
    assert "test/smoke.js" not in pair_tests(files, refs[-1:])


def test_among_files_of_the_same_name_the_one_a_test_uses_comes_first() -> None:
    # werkzeug: tests/test_urls.py named both examples/i18nurls/urls.py and src/werkzeug/urls.py,
    # the example first by name; the first source is the one that brings the test up
    files = ["examples/demo/urls.py", "src/pkg/urls.py", "tests/test_urls.py"]
    refs = [("tests/test_urls.py", "src/pkg/urls.py")]
    assert pair_tests(files, refs)["tests/test_urls.py"] == ["src/pkg/urls.py",
                                                            "examples/demo/urls.py"]


def test_rank_files_fuses_lists_and_applies_the_priors() -> None:
    lists = {"symbols": ["a.go", "README.md", "b.go"],
             "keywords": ["README.md", "b.go", "a.go"],
             "meaning": ["README.md", "a.go", "b.go"]}
    pairs = {"a_test.go": ["a.go"]}
    ranked = rank_files(lists, pairs)
    names = [r.file for r in ranked]
    assert names[0] == "a.go" and names.index("a_test.go") > 0
    assert names.index("README.md") > names.index("b.go")             # docs scaled down
    assert "documentation down-weighted" in ranked[names.index("README.md")].reasons
    assert any(r.startswith("test of a.go") for r in ranked[names.index("a_test.go")].reasons)
    asked = [r.file for r in rank_files(lists, pairs, about_docs=True)]
    assert asked.index("README.md") < asked.index("b.go")
    no_pairs = [r.file for r in rank_files(lists, pairs, params=FileRankParams(pair_share=0))]
    assert "a_test.go" not in no_pairs


def test_example_programs_are_documentation_unless_the_question_is_about_examples() -> None:
    lists = {"symbols": ["_examples/rest/main.go", "README.md", "mux.go", "tree.go"],
             "keywords": ["_examples/rest/main.go", "README.md", "mux.go", "tree.go"]}
    names = [r.file for r in rank_files(lists, {})]
    assert names[:2] == ["mux.go", "tree.go"]
    q = parse_question("Refactor graceful shutdown example")
    assert q.about_examples and not q.about_docs
    assert not parse_question("Fix graceful shutdown").about_examples
    assert parse_question("rest example, update comment").about_examples
    asked = [r.file for r in rank_files(lists, {}, about_examples=q.about_examples)]
    assert asked[0] == "_examples/rest/main.go" and asked[1] != "README.md"
    # a question about docs lifts the README, not the example programs
    docs = [r.file for r in rank_files(lists, {}, about_docs=True)]
    assert docs[0] == "README.md" and docs.index("_examples/rest/main.go") > 1


def test_the_best_sources_bring_their_tests_into_the_top_five() -> None:
    """A paired test its own evidence ranks 7th moves below its source, then down to rank
    5 (ranks 1-4 keep their order); one with no evidence of its own, or paired with a
    source below the best two, stays where the share put it."""
    code = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]
    lists = {"symbols": [*code, "tests/test_a.py", "tests/test_f.py"]}
    pairs = {"tests/test_a.py": ["a.py"], "tests/test_b.py": ["b.py"],
             "tests/test_f.py": ["f.py"]}
    off = FileRankParams(pair_share=0.0, follow_sources=0)
    assert [r.file for r in rank_files(lists, pairs, params=off)][:7] == [*code, "tests/test_a.py"]
    ranked = rank_files(lists, pairs, params=FileRankParams(pair_share=0.0))
    names = [r.file for r in ranked]
    assert names == ["a.py", "b.py", "c.py", "d.py", "tests/test_a.py", "e.py", "f.py",
                     "tests/test_f.py"]
    assert "test of a.py, placed below it" in ranked[4].reasons
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    # with the share, test_b (no evidence of its own) is lifted but not moved
    shared = [r.file for r in rank_files(lists, pairs)]
    assert shared.index("tests/test_a.py") == 4 and shared.index("tests/test_b.py") > 4


def test_any_of_a_tests_sources_among_the_best_brings_it_up() -> None:
    """A test paired with several modules (a package's test) follows whichever of them
    ranks among the best two, not only the first it was paired with; below that source."""
    code = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py", "z.py"]
    lists = {"symbols": [*code, "tests/test_pkg.py"]}
    pairs = {"tests/test_pkg.py": ["z.py", "b.py"]}   # z.py (its first source) ranks 7th
    ranked = rank_files(lists, pairs, params=FileRankParams(pair_share=0.0))
    names = [r.file for r in ranked]
    assert names[:5] == ["a.py", "b.py", "c.py", "d.py", "tests/test_pkg.py"]
    assert "test of b.py, placed below it" in ranked[4].reasons
    # a source outside the best two still brings nothing
    far = {"tests/test_pkg.py": ["z.py", "f.py"]}
    assert [r.file for r in rank_files(lists, far, params=FileRankParams(pair_share=0.0))
            ].index("tests/test_pkg.py") == 7


def test_the_question_form_tells_locate_questions_from_change_requests() -> None:
    for q in ("how does a didSave become searchable?", "Where is the retry delay capped",
              "which module renders the banner", "the class that renders tables",
              "An object holding the session", "Does the cache expire?"):
        assert is_locate_question(q), q
        assert parse_question(q).locate
    for q in ("Fix crash when the backoff overflows", "feat(context): add Context.Value",
              "Do not send empty data to `StreamingResponse`", "♻️ Use the new API",
              "Add extension to cache key", "whenever-flag: support it", "is_json is a property"):
        assert not is_locate_question(q), q
        assert not parse_question(q).locate


def test_a_question_about_comments_is_about_code_not_documentation() -> None:
    for q in ("docs: update the README", "Link to GitHub from docs", "Fix typo in the guide"):
        assert parse_question(q).about_docs, q
    for q in ("Trim and ignore empty doc comments", "docs(context): fix some comments",
              "docs: fix response.vary jsdoc field param", "docs: improved GoDoc in helpers.go",
              "Fix the docstring of Config"):
        assert not parse_question(q).about_docs, q


def test_a_docs_commit_type_alone_is_not_about_documentation_files() -> None:
    """`docs:` / `docs(scope):` says no behaviour changes, not which files: the words
    after it decide (a help string or a typing is code; "the README" is a document)."""
    for q in ("docs: clarify how --exec consumes positional arguments",
              "docs(gin): update link to dont-trust-all-proxies section",
              "Docs: Modify options type in the Application class", "doc!: Add document to X"):
        assert not parse_question(q).about_docs, q
    for q in ("docs: update the README", "docs(gin): Replace broken link to documentation",
              "doc: updated docs for throw", "Improve docs: retry"):
        assert parse_question(q).about_docs, q


def test_learned_rank_scores_candidates_by_their_features() -> None:
    """The learned step re-ranks every list's candidates by a linear score: here the
    whole-file keyword score alone, against the fused order, and documentation
    down-weighted by its flag; the best source still brings its test below it."""
    lists = {"symbols": ["a.py", "b.py", "README.md"], "keywords": ["README.md", "b.py", "a.py"]}
    pairs = {"tests/test_b.py": ["b.py"]}
    ranked = rank_files(lists, pairs)
    assert [r.file for r in ranked][:2] == ["a.py", "b.py"]
    ev = FileEvidence(symbols=[("a.py", 1.0), ("b.py", 0.9), ("README.md", 0.5)],
                      keywords=[("README.md", 9.0), ("b.py", 8.0), ("a.py", 1.0),
                                ("tests/test_b.py", 4.0)],
                      meaning=[("a.py", 0.5), ("b.py", 0.4)])
    out = learned_rank(ranked, lists, pairs, ev, weights={"kw_norm": 1.0, "is_doc": -5.0})
    names = [r.file for r in out]
    assert names[:3] == ["b.py", "tests/test_b.py", "a.py"]
    assert names[-1] == "README.md"
    assert all("learned change-request rank" in r.reasons for r in out)
    scores = [r.score for r in out]
    assert scores == sorted(scores, reverse=True)
    # no weights: the ranking so far, as it was
    assert [r.file for r in learned_rank(ranked, lists, pairs, ev, weights={})] == [
        r.file for r in ranked]


def test_only_change_requests_take_the_learned_step(workspace: Workspace) -> None:
    """The same words as a question keep the fused ranking; as a change request they are
    re-ranked by the learned step (config.LEARNED_FILE_WEIGHTS)."""
    change = workspace.query("cap the backoff delay between deployment attempts", budget=1000)
    ask = workspace.query("how is the backoff delay between deployment attempts capped?",
                          budget=1000)
    assert all("learned change-request rank" in f.reasons for f in change.files)
    assert not any("learned change-request rank" in f.reasons for f in ask.files)
    assert change.files[0].file == ask.files[0].file == "deploy/retry.go"
    named = workspace.query("Backoff", budget=1000)        # a bare name: where it is
    assert not any("learned change-request rank" in f.reasons for f in named.files)


def test_interleave_puts_each_top_files_best_hit_first() -> None:
    hits = ["a::x", "a::y", "a::z", "b::u", "c::v", "b::w"]
    files = [RankedFile("b", 3.0), RankedFile("a", 2.0), RankedFile("d", 1.0),
             RankedFile("c", 0.5)]
    out = interleave(hits, files, lambda h: h.split("::")[0],
                     lambda f: f if f == "d" else None, limit=10)
    assert out == ["b::u", "a::x", "d", "c::v", "a::y", "a::z", "b::w"]
    assert interleave(hits, files, lambda h: h.split("::")[0], lambda f: None, 3) == [
        "b::u", "a::x", "c::v"]


def test_a_behaviour_question_brings_the_source_then_its_test(workspace: Workspace) -> None:
    result = workspace.query("cap the deployment backoff delay between attempts", budget=1000)
    files = [f.file for f in result.files]
    assert files[0] == "deploy/retry.go"
    assert files.index("deploy/retry_test.go") == 1
    assert result.files[1].score < result.files[0].score
    assert source_pairs(workspace.graph)["deploy/retry_test.go"] == ["deploy/retry.go"]
    # the hits follow the file ranking: their files, by first occurrence, are its order
    hit_files = list(dict.fromkeys(h.node.file for h in result.hits))
    assert hit_files[:len(files)] == files[:len(hit_files)]
    # ... and the context shows code from both
    assert "deploy/retry.go:" in result.context and "deploy/retry_test.go:" in result.context


def test_documentation_stays_below_code_unless_asked(workspace: Workspace) -> None:
    files = [f.file for f in workspace.query("restore the previous release after a failed "
                                             "health check").files]
    assert files[0] == "deploy/rollback.go"
    assert files.index("README.md") > files.index("deploy/health.go")
    asked = [f.file for f in workspace.query("what does the readme say about rollbacks").files]
    assert asked[0] == "README.md"


def test_query_json_has_the_file_ranking(workspace: Workspace) -> None:
    out = subprocess.run([sys.executable, "-m", "neuralmind.cli.main", "query",
                          "how is the status banner rendered", str(workspace.root), "--json",
                          "--budget", "1000"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [set(f) for f in data["files"]] == [{"file", "score", "reasons", "stale"}] * len(
        data["files"])
    assert not any(f["stale"] for f in data["files"])          # freshly built (#17)
    assert data["files"][0]["file"] == "web/src/banner.ts"
    assert data["files"][1]["file"] == "web/src/banner.test.ts"
    scores = [f["score"] for f in data["files"]]
    assert scores == sorted(scores, reverse=True)
    assert data["hits"][0]["file"] == "web/src/banner.ts"
    assert data["layers"]["L3"] >= data["tokens"] // 2           # mostly code


def test_pairs_are_kept_across_a_body_save_and_follow_a_new_test(tmp_path: Path) -> None:
    ws = built_workspace(tmp_path, {
        "app/billing.py": "def total(items):\n    return sum(items)\n",
        "tests/test_billing.py": "from app.billing import total\n\n\n"
                                 "def test_total():\n    assert total([1]) == 1\n"})
    pairs = source_pairs(ws.graph)
    assert pairs == {"tests/test_billing.py": ["app/billing.py"]}
    src = tmp_path / "app" / "billing.py"
    src.write_text(src.read_text() + "\n\ndef rounded(x):\n    return round(x)\n")
    before = ws.graph
    ws.update_files(["app/billing.py"])                 # a function added: same cross-file edges
    assert ws.graph is not before and source_pairs(ws.graph) is pairs
    (tmp_path / "app" / "tax.py").write_text("def rate():\n    return 0.2\n")
    (tmp_path / "tests" / "test_tax.py").write_text("def test_rate():\n    pass\n")
    ws.update_files(["app/tax.py", "tests/test_tax.py"])
    assert source_pairs(ws.graph) == {"tests/test_billing.py": ["app/billing.py"],
                                      "tests/test_tax.py": ["app/tax.py"]}
    # same files, new cross-file references: a test named for nothing pairs by what it calls
    misc = tmp_path / "tests" / "test_misc.py"
    misc.write_text("def test_nothing():\n    pass\n")
    ws.update_files(["tests/test_misc.py"])
    assert "tests/test_misc.py" not in source_pairs(ws.graph)
    misc.write_text("from app.billing import rounded, total\n\n\n"
                    "def test_both():\n    assert rounded(total([1.2])) == 1\n")
    ws.update_files(["tests/test_misc.py"])
    assert source_pairs(ws.graph)["tests/test_misc.py"] == ["app/billing.py"]
    # read from the resolved edges by file: the new graph's whole edge index (most of the
    # pairs' cost after a structural save on a large graph) is never built for them
    assert ws.graph._out is None


def test_a_test_named_after_a_package_pairs_with_the_modules_it_uses(tmp_path: Path) -> None:
    # uvicorn's layout: tests/protocols/test_http.py is named after the package
    # protocols/http, whose __init__.py is empty; the modules it imports are what it tests
    ws = built_workspace(tmp_path, {
        "srv/__init__.py": "",
        "srv/protocols/__init__.py": "",
        "srv/protocols/http/__init__.py": "",
        "srv/protocols/http/h11_impl.py": "class H11Protocol:\n    def data_received(self, data):\n"
                                          "        return data\n",
        "srv/protocols/http/fast_impl.py": "class FastProtocol:\n    def data_received(self, d):\n"
                                           "        return d\n",
        "srv/protocols/http/flow.py": "def pause():\n    return 1\n",
        "tests/protocols/test_http.py":
            "from srv.protocols.http.h11_impl import H11Protocol\n"
            "from srv.protocols.http.fast_impl import FastProtocol\n\n\n"
            "def test_h11():\n    assert H11Protocol().data_received(b'x')\n\n\n"
            "def test_h11_twice():\n    assert H11Protocol().data_received(b'y')\n\n\n"
            "def test_fast():\n    assert FastProtocol().data_received(b'x')\n",
        "tests/test_flow.py": "def test_nothing():\n    pass\n"})
    pairs = source_pairs(ws.graph)
    # most referenced first; the empty marker file and the unreferenced module are left out
    assert pairs["tests/protocols/test_http.py"] == ["srv/protocols/http/h11_impl.py",
                                                     "srv/protocols/http/fast_impl.py"]
    assert pairs["tests/test_flow.py"] == ["srv/protocols/http/flow.py"]   # names still first
    # a package test that references none of the package's modules keeps its marker file
    files = ["pkg/http/__init__.py", "pkg/http/impl.py", "tests/test_http.py"]
    assert pair_tests(files)["tests/test_http.py"] == ["pkg/http/__init__.py"]


def test_rankings_read_pairs_by_source_as_a_scan_of_every_pair_would() -> None:
    """The file ranking reads `pairs` per ranked source (`pairing.PairIndex`), or scans every
    pair in order when a test's source is another test: the same files, scores and reasons
    both ways (random lists; two pairs the lists never reach make `pairs` chained)."""
    import random

    from neuralmind.index.pairing import pair_index

    rng = random.Random(11)
    sources = [f"pkg/m{i}.py" for i in range(40)]
    tests = [f"tests/test_m{i}.py" for i in range(40)]
    inert = {"tests/test_x1.py": ["tests/test_x2.py"], "tests/test_x2.py": ["nowhere.py"]}
    for _ in range(60):
        pairs = {t: rng.sample(sources, rng.randint(1, 3)) for t in rng.sample(tests, 25)}
        chained = {**pairs, **inert}
        assert not pair_index(pairs).chained and pair_index(chained).chained
        pool = sources + tests
        lists = {name: rng.sample(pool, 20) for name in ("symbols", "keywords", "meaning")}
        ev = FileEvidence(symbols=[(f, rng.random()) for f in lists["symbols"]],
                          keywords=[(f, 10 * rng.random()) for f in lists["keywords"]],
                          meaning=[(f, rng.random()) for f in lists["meaning"]],
                          terms=frozenset({"m1", "pkg"}), length=lambda f: len(f) * 40)
        out = []
        for p in (pairs, chained):
            ranked = rank_files(lists, p)
            learned = learned_rank(ranked, lists, p, ev)
            out.append([(r.file, r.score, r.reasons) for r in (*ranked, *learned)])
        assert out[0] == out[1]


def _features_one_at_a_time(ranked: list[RankedFile], fused: dict[str, RankedFile],
                            pairs: dict[str, list[str]], ev: FileEvidence, k: float,
                            cand: list[str], about_tests: bool, about_docs: bool,
                            about_examples: bool) -> dict[str, list[float]]:
    """Each learned feature of each candidate by its definition, one value at a time."""
    own = {f: rf.score / (max(r.score for r in fused.values()) or 1.0)
           for f, rf in fused.items()}
    sym = [f for f, _ in ev.symbols]
    sym_files = list(dict.fromkeys(sym))
    kw_top = list(dict.fromkeys(f for f, _ in ev.keywords))[:LEARNED_CANDIDATE_DEPTH]
    cos = {}
    for f, c in ev.meaning:
        cos.setdefault(f, c)
    at = [r.file for r in ranked]
    out: dict[str, list[float]] = {}
    for f in cand:
        test = is_test_path(f)
        lens = math.log1p(ev.length(f))
        row = {
            "fused": own.get(f, 0.0),
            "rr_fused": (k + 1) / (k + (at.index(f) + 1 if f in at else 2 * len(at))),
            "sym_norm": next((s for g, s in ev.symbols if g == f), 0.0) / ev.symbols[0][1],
            "sym_hits": sym.count(f) / max(sym.count(g) for g in sym),
            "kw": dict(ev.keywords).get(f, 0.0), "cos": cos.get(f, ev.meaning[-1][1]),
            "is_test": float(test and not about_tests),
            "is_doc": float(scaled_as_documentation(f, about_docs, about_examples)),
            "pair_lift": max((own.get(s, 0.0) for s in pairs.get(f, ())), default=0.0)
            if test else 0.0,
            "path_match": len(ev.terms & set(code_tokens(f.replace("/", " ").replace(".", " "))))
            / max(1, len(ev.terms)),
            "exact": float(f in ev.exact), "sym_top": float(f == ev.symbols[0][0]),
            "rrf_sym": (k + 1) / (k + sym_files.index(f) + 1) if f in sym_files else 0.0,
            "rrf_kw": (k + 1) / (k + kw_top.index(f) + 1) if f in kw_top else 0.0,
            "rrf_mean": (k + 1) / (k + list(cos).index(f) + 1) if f in cos else 0.0,
            "lens": lens}
        for name, v in row.items():
            out.setdefault(name, []).append(v)
    return out


def test_candidate_features_are_each_features_definition() -> None:
    """The learned step's features, made one candidate row at a time, equal each feature's
    definition computed on its own (random lists, pairs, flags): a column that took
    another's values or order fails; z-scores and gaps are read from the raw columns."""
    import random

    import numpy as np

    rng = random.Random(5)
    sources = [f"pkg/m{i}.py" for i in range(30)] + ["README.md", "examples/demo.py"]
    tests = [f"tests/test_m{i}.py" for i in range(30)]
    pool = sources + tests
    k = FileRankParams().k
    for trial in range(40):
        pairs = {t: rng.sample(sources, rng.randint(1, 3)) for t in rng.sample(tests, 15)}
        lists = {name: rng.sample(pool, 20) for name in ("symbols", "keywords", "meaning")}
        ev = FileEvidence(symbols=[(f, 1.0 - i / 50) for i, f in
                                   enumerate(rng.choices(lists["symbols"], k=25))],
                          keywords=[(f, 10 - i / 3) for i, f in enumerate(lists["keywords"])],
                          meaning=[(f, 0.9 - i / 100) for i, f in
                                   enumerate(rng.choices(lists["meaning"], k=30))],
                          exact=frozenset(rng.sample(pool, 2)),
                          terms=frozenset({"m1", "pkg", "demo"}), length=lambda f: len(f) * 40)
        flags = (trial % 2 == 0, trial % 3 == 0, trial % 5 == 0)
        ranked = rank_files(lists, pairs)
        fused = fuse(lists, FileRankParams())
        cand, col = candidate_features(ranked, fused, pairs, ev, k, LEARNED_CANDIDATE_DEPTH,
                                       *flags)
        want = _features_one_at_a_time(ranked, fused, pairs, ev, k, cand, *flags)
        for name in ("fused", "rr_fused", "sym_norm", "sym_hits", "is_test", "is_doc",
                     "pair_lift", "path_match", "exact", "sym_top", "rrf_sym", "rrf_kw",
                     "rrf_mean"):
            assert col[name].tolist() == pytest.approx(want[name], abs=1e-12), name
        kw, cos, lens = (np.array(want[n]) for n in ("kw", "cos", "lens"))
        assert col["kw_norm"].tolist() == pytest.approx((kw / ev.keywords[0][1]).tolist())
        assert col["cos_gap"].tolist() == pytest.approx((cos - cos.max()).tolist())
        for name, v in (("kw_z", kw), ("cos_z", cos), ("size_z", lens)):
            assert col[name].tolist() == pytest.approx(((v - v.mean()) / v.std()).tolist()), name
        assert col["size_lo"].tolist() == pytest.approx(np.minimum(col["size_z"], 0).tolist())
        assert col["size_hi"].tolist() == pytest.approx(np.maximum(col["size_z"], 0).tolist())


def test_a_saved_test_file_is_paired_at_the_next_answer(tmp_path: Path) -> None:
    """The pairs read per source are made again for a new graph's pairs: a test file added
    by a save is lifted below its source at the next change request (real workspace)."""
    ws = built_workspace(tmp_path, {
        "billing/invoice.py": '''
            """Invoices and their totals."""


            def invoice_total(items):
                """The total of an invoice's line items, rounded to cents."""
                return round(sum(item.amount for item in items), 2)
        ''',
        "mail/sender.py": '''
            """Outgoing email."""


            def send_email(address, body):
                """Send `body` to `address`."""
                return address, body
        '''})
    question = "round the invoice total of line items"
    before = ws.query(question, budget=1000)
    assert before.files[0].file == "billing/invoice.py"
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_invoice.py").write_text(
        "from billing.invoice import invoice_total\n\n\n"
        "def test_empty():\n    assert invoice_total([]) == 0\n", encoding="utf-8")
    ws.update_files(["tests/test_invoice.py"])
    after = {f.file: f.reasons for f in ws.query(question, budget=1000).files}
    assert any(r.startswith("test of billing/invoice.py") for r in after["tests/test_invoice.py"])
