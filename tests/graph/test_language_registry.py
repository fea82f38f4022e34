"""A language is one spec module: every registered spec declares every part, and every
table the graph uses is derived from the specs (nothing to forget elsewhere)."""

from __future__ import annotations

import pytest

from neuralmind.graph import languages
from neuralmind.graph.import_rules import ImportRules
from neuralmind.graph.lang_spec import LanguageSpec
from neuralmind.graph.languages import SPECS


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_language_declares_every_part(name: str) -> None:
    spec = SPECS[name]
    assert spec.name == name
    assert spec.extensions or spec.filenames, "no files select it"
    assert all(e.startswith(".") and e == e.lower() for e in spec.extensions)
    languages.query(name, spec.definitions)           # the grammar parses its own queries
    for source in (spec.calls, spec.imports):
        if source:
            languages.query(name, source)
    assert spec.builtins is not None, "builtins not declared (frozenset() for none)"
    assert spec.import_rule != "", "import rule not declared (None for a language without imports)"
    if spec.import_rule is None:
        assert not spec.imports, "it captures imports but has no rule to resolve them"
    else:
        assert callable(getattr(ImportRules, spec.import_rule, None)), spec.import_rule
        assert spec.imports, "an import rule without an import query never runs"


def test_a_family_agrees_on_what_resolution_needs() -> None:
    by_family: dict[str, list[LanguageSpec]] = {}
    for spec in SPECS.values():
        by_family.setdefault(spec.family_name, []).append(spec)
    for family, specs in by_family.items():
        for attr in ("import_rule", "builtins", "members_in_scope", "star_reexports"):
            assert len({getattr(s, attr) for s in specs}) == 1, (family, attr)


def test_every_table_derives_from_the_specs() -> None:
    assert tuple(SPECS) == languages.LANGUAGES
    for name, spec in SPECS.items():
        for ext in spec.extensions:
            assert languages.language_for(f"x{ext}") == name
        for filename in spec.filenames:
            assert languages.language_for(f"dir/{filename}") == name
        assert languages.family_of(name) == spec.family_name
    assert len(languages.EXTENSIONS) == sum(len(s.extensions) for s in SPECS.values()), \
        "two languages claim one extension"
