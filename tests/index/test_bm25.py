"""BM25 over node texts: ranking, incremental edits, persistence and damage."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from neuralmind.index.bm25 import BM25Index
from neuralmind.index.postings import DocNumbers
from neuralmind.index.symbol_rank import is_file_id
from neuralmind.index.tokens import code_tokens

DOCS = {
    "auth.py::HTTPBasicAuth": "class HTTPBasicAuth attaches HTTP Basic Authentication to a request",
    "auth.py::HTTPDigestAuth": "class HTTPDigestAuth digest authentication challenge nonce",
    "sessions.py::Session": "class Session persists cookies and parameters across requests",
    "cookies.py::RequestsCookieJar": "class RequestsCookieJar cookie jar dict interface",
    "utils.py::super_len": "def super_len(o) length of a body file object or string",
}


def build() -> BM25Index:
    index = BM25Index()
    for doc_id, text in DOCS.items():
        index.add(doc_id, text)
    return index


def test_ranks_the_matching_document_first() -> None:
    index = build()
    assert index.search("digest authentication nonce", 3)[0][0] == "auth.py::HTTPDigestAuth"
    assert index.search("how are cookies persisted", 3)[0][0] == "sessions.py::Session"
    top = index.search("super_len", 2)
    assert top[0][0] == "utils.py::super_len" and len(top) == 1
    assert index.search("zebra unicorn", 5) == []
    scores = [s for _, s in index.search("authentication request cookie", 5)]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_add_replaces_and_remove_forgets() -> None:
    index = build()
    index.add("utils.py::super_len", "def super_len(o) nonce nonce nonce")
    assert len(index) == 5
    assert index.search("nonce", 1)[0][0] == "utils.py::super_len"
    assert index.remove("utils.py::super_len") and not index.remove("utils.py::super_len")
    assert "utils.py::super_len" not in index
    assert index.search("nonce", 5)[0][0] == "auth.py::HTTPDigestAuth"
    # postings hold no trace of the removed document
    assert all("utils.py::super_len" not in p for p in index._postings.values())


def test_edits_leave_the_index_a_fresh_build_of_the_final_documents() -> None:
    """Terms in one document are stored compactly and change shape as documents come and
    go; scores and counts must be those of an index built from the final texts."""
    index = build()
    index.add("x.py::f", "nonce unique_term jar")        # nonce: 1 -> 2 documents
    index.add("x.py::g", "unique_term other_word")       # unique_term: 1 -> 2 documents
    index.remove("auth.py::HTTPDigestAuth")              # nonce: back to one document
    index.add("x.py::g", "other_word other_word")        # unique_term: back to one
    index.remove("x.py::f")                              # jar, unique_term: gone or fewer
    final = {**{k: v for k, v in DOCS.items() if k != "auth.py::HTTPDigestAuth"},
             "x.py::g": "other_word other_word"}
    fresh = BM25Index()
    for doc_id, text in final.items():
        fresh.add(doc_id, text)
    for q in ("nonce", "unique_term", "other_word jar", "cookie jar dict", "class request"):
        assert index.search(q, 10) == fresh.search(q, 10), q
        assert all(index.idf(t) == fresh.idf(t) for t in q.split())
    for doc_id in final:
        assert index.term_frequencies(doc_id) == fresh.term_frequencies(doc_id)
    assert index.search("unique_term", 5) == [] and index.idf("nonce") == fresh.idf("nonce")


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    index = build()
    path = tmp_path / "bm25.bin"
    index.save(path)
    loaded = BM25Index.load(path)
    assert loaded is not None and len(loaded) == len(index)
    for q in ("digest nonce", "cookie jar", "length of a body"):
        assert loaded.search(q, 5) == index.search(q, 5)
    for doc_id in index.ids():   # the counts a document was added with survive the trip
        assert loaded.term_frequencies(doc_id) == index.term_frequencies(doc_id)
    index.add("x.py::f", "nonce nonce jar")
    assert index.term_frequencies("x.py::f") == {"nonce": 2, "jar": 1}
    assert index.term_frequencies("nowhere") == {}


def test_damaged_or_foreign_files_are_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "bm25.bin"
    assert BM25Index.load(path) is None
    path.write_text("{not postings", encoding="utf-8")
    assert BM25Index.load(path) is None
    assert not path.exists() and len(list(tmp_path.glob("bm25.bin.corrupt-*"))) == 1
    build().save(path)
    good = path.read_bytes()
    for damaged in (good[:-9], good[:-64] + b"\xa5" * 64):    # truncated; a page overwritten
        path.write_bytes(damaged)
        assert BM25Index.load(path) is None and not path.exists()
        assert list(tmp_path.glob("bm25.bin.corrupt-*"))        # moved aside, not deleted
    head = good.index(b'"version":1')
    path.write_bytes(good[:head] + b'"version":9' + good[head + 11:])
    assert BM25Index.load(path) is None and path.exists()   # another version: rebuilt, kept


def _documents(n: int) -> dict[str, str]:
    """n documents over a small vocabulary (many ties), files among symbols."""
    rng = random.Random(7)
    words = [f"w{i}" for i in range(120)]
    return {(f"m{i % 30}.py" if i % 6 == 0 else f"m{i % 30}.py::s{i}"):
            " ".join(rng.choices(words, k=rng.randint(1, 40))) for i in range(n)}


def test_flat_base_and_dict_overlay_rank_byte_identically(tmp_path: Path) -> None:
    """The same edits on an index that stays in dicts and on one merged into its flat base
    every 300 entries (then saved and mapped): every score is the same float, ties and all,
    for the whole index and for the files subset at another b."""
    docs = _documents(1500)
    rng = random.Random(3)
    dicts, flat = BM25Index(overlay_entries=10**9), BM25Index(overlay_entries=300)
    for doc_id, text in docs.items():
        dicts.add(doc_id, text)
        flat.add(doc_id, text)
    assert flat._base_n > 0 and not dicts._base_n
    for i, doc_id in enumerate(list(docs)[:200]):   # removals and re-adds hit the base
        text = " ".join(rng.choices(["w1", "w2", "w7", "new_term"], k=5))
        for index in (dicts, flat):
            index.remove(doc_id) if i % 3 == 0 else index.add(doc_id, text)
    flat.save(tmp_path / "bm25.bin")
    for index in (dicts, flat):
        index.add("m1.py::late", "w1 w5 new_term")
        index.add("m2.py::digits", "w1 \u0661\u0662")    # \d+ takes any script's digits
    flat.compact()
    flat.add("m3.py::later", "\u0661\u0662 w2")
    dicts.add("m3.py::later", "\u0661\u0662 w2")
    assert flat._docs and flat._base_n and sorted(flat.ids()) == sorted(dicts.ids())
    for q in ("w1 w2 w3", "w5", "w7 w7 w8 w100", "new_term w1", "absent w3", "é",
              "\u0661\u0662 w1"):
        for subset, b in ((None, None), (is_file_id, 0.9)):
            assert (flat.search_terms(q.split(), 40, subset, b)
                    == dicts.search_terms(q.split(), 40, subset, b)), (q, subset)
        assert flat.idf(q.split()[0]) == dicts.idf(q.split()[0])
    assert flat.term_frequencies("m1.py::s1") == dicts.term_frequencies("m1.py::s1")
    assert len(flat) == len(dicts)


def test_document_numbers_made_ahead_serve_the_next_save(tmp_path: Path) -> None:
    """A server numbers the base documents at warm-up and after each flush (every save to
    disk makes a new base): the next removal reads that map instead of making it, and
    the answers are those of an index that made it on demand."""
    path = tmp_path / "bm25.bin"
    build().save(path)
    ahead, lazy = BM25Index.load(path), BM25Index.load(path)
    assert ahead is not None and lazy is not None
    assert ahead._base_num is None
    ahead.number_documents()
    numbers = ahead._base_num
    assert numbers is not None and set(numbers.ids) == set(DOCS)
    for index in (ahead, lazy):
        index.add("auth.py::HTTPDigestAuth", "digest nonce nonce")
        assert index.remove("cookies.py::RequestsCookieJar")
    assert ahead._base_num is numbers, "the save made the map again"
    for q in ("digest nonce", "cookie jar", "length of a body"):
        assert ahead.search(q, 5) == lazy.search(q, 5)
    ahead.save(path)                       # a flush: a new base, numbered again ahead
    assert ahead._base_num is None
    ahead.number_documents()
    assert ahead._base_num is not None
    assert [ahead._base_num.get(d) for d in ahead._base.ids] == list(range(len(ahead._base.ids)))
    assert ahead._base_num.get("cookies.py::RequestsCookieJar") is None


class _Colliding(str):
    """An id whose hash is another's: the numbers compare the ids themselves."""

    def __hash__(self) -> int:
        return 7


def test_document_numbers_tell_ids_with_one_hash_apart() -> None:
    ids = [_Colliding(f"a.py::f{i}") for i in range(5)] + ["b.py", "c.py::g"]
    numbers = DocNumbers(ids)
    assert [numbers.get(i) for i in ids] == list(range(len(ids)))
    assert numbers.get(_Colliding("a.py::absent")) is None and numbers.get("absent") is None


def test_a_written_bases_numbers_and_masks_are_the_ones_made_from_its_ids(tmp_path: Path,
                                                                          ) -> None:
    """A flush job moves the old base's numbers and masks (numpy) rather than making them
    from the new base's ids (a Python call per document, GIL held beside the saves): the
    result is what making them gives, through removals, replacements and additions."""
    rng = random.Random(3)
    path = tmp_path / "bm25.bin"
    index = BM25Index()
    for i in range(400):
        index.add(f"m{i % 37}.py::s{i}" if i % 5 else f"m{i}.py", f"alpha w{i % 11} w{i % 7}")
    index.save(path)
    for _round in range(3):
        index.number_documents()
        index.search_terms(["alpha"], 5, subset=is_file_id)     # a subset's mask made
        live = list(index.ids())
        for doc in rng.sample(live, 40):
            index.remove(doc)
        for doc in rng.sample(live, 20):
            index.add(doc, "alpha replaced")
        for i in range(15):
            index.add(f"new{_round}_{i}.py" if i % 2 else f"n.py::f{_round}_{i}", "beta")
        written = index.snapshot()(path)
        ids = written.base.ids
        assert [written.numbers.get(d) for d in ids] == list(range(len(ids)))
        assert written.numbers.get("absent.py") is None
        gone = set(live) - set(ids)
        assert gone and all(written.numbers.get(d) is None for d in gone)
        assert list(written.masks[is_file_id]) == [is_file_id(d) for d in ids]
        assert index.adopt(written, index.snapshots)


def test_best_of_a_deeper_search_is_the_shallower_search(tmp_path: Path) -> None:
    """`BM25Index.best(search_terms(q, K), k)` is `search_terms(q, k)` for K >= k, ties at
    the edge included (the files subset is scored once a question, read at two depths), on
    the flat base and its overlay."""
    docs = _documents(1500)
    index = BM25Index(overlay_entries=300)
    for doc_id, text in docs.items():
        index.add(doc_id, text)
    index.save(tmp_path / "bm25.bin")
    index.add("m1.py", "w1 w5 new_term")            # the overlay beside the mapped base
    for q in ("w1 w2 w3", "w5", "w7 w7 w8 w100", "new_term w1", "w3"):
        for subset, b in ((None, None), (is_file_id, 0.9)):
            for k, deep in ((3, 20), (20, 100), (7, 7), (100, 500)):
                assert BM25Index.best(index.search_terms(q.split(), deep, subset, b), k) == (
                    index.search_terms(q.split(), k, subset, b)), (q, subset, k, deep)


def test_a_base_documents_kept_length_follows_the_base(tmp_path: Path) -> None:
    """`length` keeps base documents' counts; each answer must be the count a fresh index
    of the same documents gives, after removals, re-adds, compactions and a reload."""
    index = build()
    index.compact()                                    # every document in the base now
    doc = "auth.py::HTTPBasicAuth"
    first = index.length(doc)
    assert first == len(code_tokens(DOCS[doc])) > 0 and index.length(doc) == first
    assert index.length("new.py::f") == 0              # not indexed: 0, kept too
    index.remove(doc)
    assert index.length(doc) == 0                      # fails if the kept count outlives it
    text = "def parse_header(value) splits a header"
    index.add("new.py::f", text)
    index.compact()                                    # the new document joins the base
    assert index.length("new.py::f") == len(code_tokens(text))   # fails if the kept 0 stays
    index.add(doc, "class HTTPBasicAuth basic")
    index.compact()
    assert index.length(doc) == len(code_tokens("class HTTPBasicAuth basic")) != first
    index.save(tmp_path / "bm25.bin")
    loaded = BM25Index.load(tmp_path / "bm25.bin")
    assert loaded is not None
    assert {d: loaded.length(d) for d in loaded.ids()} == {d: index.length(d) for d in index.ids()}


def test_a_merge_in_small_steps_makes_the_same_base(tmp_path: Path, monkeypatch) -> None:
    """`merge` places entries MERGE_CHUNK at a time (64k: bounded GIL holds, STALL16): with
    steps of 7 entries, runs of a term cut across steps, dead documents among them and new
    documents after, the base is array for array the one a single step makes."""
    from neuralmind.index import postings

    docs = _documents(600)
    index = BM25Index(overlay_entries=10**9)
    for doc_id, text in docs.items():
        index.add(doc_id, text)
    index.save(tmp_path / "bm25.bin")
    for i, doc_id in enumerate(list(docs)[:90]):
        index.remove(doc_id) if i % 2 else index.add(doc_id, f"w1 w3 fresh{i} fresh{i % 7}")
    base, alive = index._base, index._alive
    assert alive is not None and base.entries > 1000
    ids = list(index._docs)
    args = (base, alive, ids, [index._lengths[d] for d in ids])
    made = {}
    for step in (7, 10**9):
        monkeypatch.setattr(postings, "MERGE_CHUNK", step)
        made[step] = postings.merge(*args, index._overlay_postings())
    small, whole = made[7], made[10**9]
    assert small.ids == whole.ids
    for name in ("lengths", "term_blob", "term_off", "term_hash", "term_perm", "post_off",
                 "post_docs", "post_tf"):
        a, b = getattr(small, name), getattr(whole, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
