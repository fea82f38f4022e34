"""What a question says, read once: its keyword terms, the identifiers it names,
whether it asks about tests, documentation or examples, and whether it asks where code is.

Change requests name the change as well as the code ("fix", "add support for", "allow
... instead"): those words are dropped from the keyword query only (measured: dropping
them from the embedded question too was worse), so BM25 weighs the words about code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from neuralmind.index.tokens import code_tokens

_CHANGE_WORDS = frozenset(code_tokens(
    "fix fixes fixed add adds added support supports allow allows allowed use uses used "
    "using make makes remove removed update updated change changed instead new now also "
    "ensure properly correctly when don't doesn't issue bug"))
_TEST_WORDS = frozenset({"test", "tests", "testing", "pytest", "unittest", "fixture",
                         "fixtures", "spec", "specs", "mock", "conftest"})
_DOC_WORDS = frozenset(code_tokens("doc docs documentation readme changelog guide tutorial "
                                   "markdown"))
_EXAMPLE_WORDS = frozenset(code_tokens("example examples"))
# Comments are code: "doc comments", "fix the jsdoc", "docs(context): fix some comments" ask
# for the source files whose comments change, not for the README (BENCHMARKS RETR11).
_COMMENT_WORDS = frozenset(code_tokens("comment comments docstring docstrings jsdoc godoc "
                                       "rustdoc javadoc tsdoc"))
# A conventional-commit type `docs:` / `docs(scope):` says the change alters no behaviour,
# not where it is: in code repositories it is as often comments, help strings and typings
# (fd's "docs: clarify how --exec consumes ...", koa's "docs: Provide more typings ...");
# the words after it still say when the files are documentation ("docs: update README").
_DOC_COMMIT_TYPE = re.compile(r"^\s*docs?(\([^)]*\))?!?:", re.IGNORECASE)
_WH_WORDS = frozenset({"how", "what", "where", "which", "why", "when", "who", "whom", "whose"})
_ARTICLES = frozenset({"the", "a", "an"})
_FIRST_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_LOOKUP = re.compile(r"\s*`?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(\))?`?\s*")
_IDENT = re.compile(r"`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\(\))?")


@dataclass(frozen=True)
class Question:
    text: str
    terms: tuple[str, ...]           # code tokens of the whole question (for line matching)
    keyword_terms: tuple[str, ...]   # what BM25 is asked: the terms minus change words
    about_tests: bool                # tests keep their full score when asked about
    about_docs: bool                 # so do documentation files
    about_examples: bool = False     # and example programs
    locate: bool = False             # asks where or how code is, not for a change


def parse_question(text: str) -> Question:
    terms = tuple(code_tokens(text))
    keyword = tuple(t for t in terms if t not in _CHANGE_WORDS) or terms
    about_tests = any(t in _TEST_WORDS for t in terms) or bool(
        re.search(r"\btest", text, re.IGNORECASE))
    subject = tuple(code_tokens(_DOC_COMMIT_TYPE.sub(" ", text, count=1)))
    about_docs = any(t in _DOC_WORDS for t in subject) and not any(
        t in _COMMENT_WORDS for t in terms)
    about_examples = any(t in _EXAMPLE_WORDS for t in terms)
    return Question(text, terms, keyword, about_tests, about_docs, about_examples,
                    is_locate_question(text))


def is_locate_question(text: str) -> bool:
    """A question in question form (it ends with "?" or opens with a wh-word: "how does
    X ...", "where is Y ...") or a description of a thing (it opens with an article:
    "the class that renders tables") asks where code is or how it works; anything else
    (an imperative "fix X when Y", "add option Z", a commit subject "feat(ctx): ...") is
    read as a change request. The two want different files: a change touches the hub
    files that hold a feature and the tests beside them, a locate question often the
    one small module that does one thing (BENCHMARKS.md RETR7/RETR8), so file_rank
    applies its learned step to change requests only. The rule is grammar, nothing
    learned: of the 1,411 commit subjects of the history sets, none takes question form
    and one opens with an article ("A few changes to ...")."""
    t = text.strip()
    if t.endswith("?"):
        return True
    first = _FIRST_WORD.search(t)
    return first is not None and first.group(0).lower() in _WH_WORDS | _ARTICLES


def query_identifiers(query: str) -> set[str]:
    """Tokens of the question written like code: `x`, snake_case, camelCase, dotted, f()."""
    found: set[str] = set()
    for m in _IDENT.finditer(query):
        if m.group(1):
            found.update(p for p in re.split(r"[^A-Za-z0-9_.]+", m.group(1)) if p)
            continue
        word, call = m.group(2), m.group(3)
        if (call or "_" in word.strip("_") or "." in word
                or re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|[A-Z][a-z]+[A-Z]", word)):
            found.add(word)
    out: set[str] = set()
    for w in found:
        out.add(w)
        if "." in w:
            out.add(w.rsplit(".", 1)[-1])
    return out


def lookup_name(query: str) -> str | None:
    """The name a question consists of, lowercased (`foo_bar`, foo(), a.b.c -> c, even
    a plain word): such a question asks for that symbol, so it leads the hits. None when
    the question says anything more."""
    m = _LOOKUP.fullmatch(query)
    return m.group(1).rsplit(".", 1)[-1].lower() if m else None
