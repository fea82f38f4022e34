"""The eval harness: scores per mode on the committed query set, and never touches a project store."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from neuralmind.cli.main import main
from neuralmind.memory.decisions.eval import EvalReport, load_queries, run_eval
from neuralmind.memory.decisions.store import DecisionStore

FIXTURE = Path(__file__).parent / "fixtures" / "decision_queries.json"


@pytest.fixture(scope="module")
def evaluation(model: object) -> EvalReport:
    return run_eval(load_queries(FIXTURE), limit=5)


@pytest.fixture(scope="module")
def report(evaluation: EvalReport) -> dict:
    return evaluation.to_json()


def _mode(report: dict, name: str) -> dict:
    return next(m for m in report["modes"] if m["mode"] == name)


def test_every_mode_ran_and_keyword_cannot_find_paraphrases(report: dict) -> None:
    assert [m["mode"] for m in report["modes"]] == ["keyword", "keyword-like", "semantic", "hybrid"]
    assert all(m["ran"] for m in report["modes"])
    assert report["decisions"] == 35
    assert _mode(report, "keyword")["paraphrases"]["recall"]["mean"] == 0.0   # by construction
    assert _mode(report, "keyword")["questions"]["recall"]["mean"] == 1.0


def test_preregistered_keep_rule_for_hybrid(report: dict) -> None:
    """The rule committed in the fixture before semantic/hybrid were first run on it."""
    kw, hy, se = _mode(report, "keyword"), _mode(report, "hybrid"), _mode(report, "semantic")
    assert hy["paraphrases"]["recall"]["mean"] > kw["paraphrases"]["recall"]["mean"]
    assert hy["questions"]["recall"]["mean"] >= kw["questions"]["recall"]["mean"]
    assert hy["questions"]["mrr"]["mean"] >= kw["questions"]["mrr"]["mean"] - 0.05
    assert hy["exact_titles"]["ranked_first"] >= kw["exact_titles"]["ranked_first"]
    assert se["paraphrases"]["recall"]["mean"] >= 0.40                       # preregistered expectation
    assert hy["paraphrases"]["recall"]["mean"] >= 0.35


def test_misses_are_listed(report: dict) -> None:
    kw = _mode(report, "keyword")
    assert len(kw["paraphrases"]["misses"]) == 20
    miss = kw["paraphrases"]["misses"][0]
    assert set(miss) == {"q", "expected", "got", "rank"}


def test_modes_without_the_model_are_reported_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-model"
    empty.mkdir()
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(empty))
    out = run_eval(load_queries(FIXTURE), modes=("keyword", "semantic", "hybrid")).to_json()
    assert [m["ran"] for m in out["modes"]] == [True, False, False]
    assert "model" in out["modes"][1]["reason"] and "keyword results only" in out["modes"][2]["reason"]


def test_eval_never_reads_or_changes_the_project_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    store = DecisionStore(project)
    store.record("Real decision", "Must survive the eval.")
    del store
    gc.collect()                                  # close our connection: the WAL is checkpointed now
    state = project / ".neuralmind"
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in state.iterdir()}
    empty_project = tmp_path / "empty"
    empty_project.mkdir()
    monkeypatch.setenv("NEURALMIND_DECISION_SEARCH", "keyword")   # keep this test fast
    for where in (project, empty_project):
        monkeypatch.chdir(where)
        assert main(["decisions", "eval", str(where), "--queries", str(FIXTURE), "--mode", "keyword",
                     "--format", "json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["modes"][0]["questions"]["n"] == 20
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in state.iterdir()}
    assert after == before
    assert not (empty_project / ".neuralmind").exists()
    assert [d.title for d in DecisionStore(project).decisions()] == ["Real decision"]


def test_markdown_table_names_each_mode(evaluation: EvalReport) -> None:
    md = evaluation.to_markdown()
    assert "| Measure | keyword | keyword-like | semantic | hybrid |" in md
    assert "Recall@5 on 20 paraphrases" in md
    assert "## Misses: keyword" in md
