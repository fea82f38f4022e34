"""The recall eval set keeps its preregistered shape: >= 100 atoms, >= 150 questions, and
paraphrases / about-code questions that share no search word with their answer."""

from __future__ import annotations

import json
from pathlib import Path

from neuralmind.memory.atoms import TYPES
from neuralmind.memory.terms import matches, search_terms

FIXTURE = Path(__file__).parent / "fixtures" / "memory_eval.json"
SETS = ("exact", "paraphrases", "about_code")


def _words(atom: dict, synonyms: dict[str, list[str]]) -> str:
    syns = [s for h in atom["hubs"] for s in synonyms.get(h, [])]
    return " ".join([atom["label"], atom["text"], *atom["hubs"], *syns])


def test_the_eval_set_has_its_preregistered_shape() -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    atoms = {a["key"]: a for a in data["atoms"]}
    assert len(atoms) == len(data["atoms"]) >= 100
    assert {a["type"] for a in atoms.values()} == set(TYPES)
    assert sum(len(data[s]) for s in SETS) >= 150
    assert all(q["answers"] and set(q["answers"]) <= set(atoms) for s in SETS for q in data[s])
    for q in data["exact"]:
        assert any(matches(t, _words(atoms[k], data["hubs"])) for k in q["answers"]
                   for t in search_terms(q["q"])), q
    for s in ("paraphrases", "about_code"):
        for q in data[s]:
            shared = [t for k in q["answers"] for t in search_terms(q["q"])
                      if matches(t, _words(atoms[k], data["hubs"]))]
            assert shared == [], (q["q"], shared)
    assert all(any(t.startswith("neuralmind/") for k in q["answers"] for t in atoms[k]["about"])
               for q in data["about_code"])
