"""Our o200k_base encoder against bpe-openai's Rust encoder, the oracle it replaces.

bpe-openai stays installed (it ships the rank file), so every check compares token
ids or pre-tokenizer pieces with the real thing rather than with stored answers.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import bpe_openai
import pytest
from bpe_openai import _bindings

from neuralmind.context import o200k
from neuralmind.context.tokens import count_tokens, truncate_to_tokens

REPO = Path(__file__).resolve().parents[2]

TRICKY = [
    "",
    "x",
    "don't I'VE we'Re you'd they'll she's IT'S 'LL 's 'T 'm 'D",
    "x's X'S x'ſ Kelvin \u212a's",
    "日本語のテキストと中文，한국어 텍스트",
    "e\u0301\u0301 cafe\u0301 \u0915\u094d\u0937\u093f \u0e01\u0e34\u0e19 \u05e9\u05b8\u05c1",
    "😀👍🏽 👨‍👩‍👧‍👦 🇫🇷🇩🇪 ❤️",
    "1234567890 12 123 1234 ١٢٣٤٥ ½ Ⅻ 𝟙𝟚𝟛𝟜",
    "a\r\nb\rc\n\rd\n\n\r\n\r\r e  \r\n  f",
    "\tdef f():\n\t\treturn 1\t \n",
    "a\u00a0b \u00a0 c\u00a0\u00a0d \u3000x \u2003y \u200bz",
    "a\x1cb\x1d\x1e\x1f c \x1c \x00\x7f",
    "trailing   ",
    "trailing\n\n  \n",
    "   ",
    "\n",
    "<|endoftext|> text <|endofprompt|><|fim_prefix|>",
    "//\n/ a//\n//\r\n/x */\n",
    "𝐀𝐁𝐜𝐝 𐍈𐌰𐌹 𠀀𠀁 \U00031350\U00010d50\U00010d70\U000116d0",
    "\ue000\U000f0000\U0010fffd\uffff\ufffe\U000e0001",
    "İstanbul ıi ß ẞ ς Σ ǅ ʰ",
    "CamelCaseWord HTTPServer getHTTPResponseCode __init__ snake_case_name",
    "x" * 300 + " " + "Zz" * 150,
    " " * 100 + "x" + "\n" * 40 + "y",
    "lone \ud800 high, lone \udfff low, joined pair \ud83d\ude00 end",
]


@pytest.fixture(scope="module")
def oracle() -> bpe_openai.Encoding:
    return bpe_openai.get_encoding("o200k_base")


@pytest.fixture(scope="module")
def oracle_pieces() -> Callable[[str], list[str]]:
    return _bindings.tokenizer_for_encoding("o200k_base").pretokenize


def _oracle_ids(oracle: bpe_openai.Encoding, text: str) -> list[int]:
    return oracle.encode(text, disallowed_special=())


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_strings_encode_like_bpe_openai(oracle: bpe_openai.Encoding, text: str) -> None:
    ours = o200k.encoder().encode(text)
    assert ours == _oracle_ids(oracle, text)
    assert count_tokens(text) == len(ours)
    assert o200k.encoder().decode(ours) == oracle.decode(ours)


def _probe(cp: int) -> str:
    """Text whose pieces change if `cp` is classed differently in any part of the pattern."""
    c = chr(cp)
    return "\n".join(
        [f"a{c}", f"A{c}A", f"1{c}Aa", f"1{c}", f"{c}a", f"(({c}", f"x{c}{c}x",
         f"x'{c}", f"x'{c}e", f"x'l{c}", f"x'r{c}", f"{c} {c}", ""]
    )


def _swept_code_points() -> Iterator[list[int]]:
    """Blocks of code points: planes 0-3 and 14 in full, a sample of the others."""
    everything = [
        cp for cp in range(0x110000)
        if not 0xD800 <= cp <= 0xDFFF and (cp < 0x40000 or 0xE0000 <= cp < 0xF0000 or cp % 97 == 0)
    ]
    for i in range(0, len(everything), 512):
        yield everything[i : i + 512]


def test_every_code_point_splits_like_bpe_openai(
    oracle_pieces: Callable[[str], list[str]],
) -> None:
    encoder = o200k.encoder()
    checked = 0
    for block in _swept_code_points():
        text = "".join(map(_probe, block))
        if encoder.pieces(text) != oracle_pieces(text):
            first = next(
                cp for cp in block if encoder.pieces(_probe(cp)) != oracle_pieces(_probe(cp))
            )
            c = _probe(first)
            pytest.fail(
                f"U+{first:04X}: ours {encoder.pieces(c)!r} != bpe-openai {oracle_pieces(c)!r}"
            )
        checked += len(block)
    assert checked > 0x50000


def _repository_texts() -> Iterator[tuple[Path, str]]:
    for path in sorted(REPO.rglob("*")):
        relative = path.relative_to(REPO).parts
        if path.suffix not in (".py", ".md", ".toml") or not path.is_file():
            continue
        if any(p.startswith(".") or p == "node_modules" or p.endswith(".egg-info")
               for p in relative):
            continue
        yield path, path.read_text(encoding="utf-8")


def test_every_repository_file_encodes_like_bpe_openai(oracle: bpe_openai.Encoding) -> None:
    encoder = o200k.encoder()
    files = 0
    for path, text in _repository_texts():
        ours = encoder.encode(text)
        assert ours == _oracle_ids(oracle, text), path
        assert count_tokens(text) == len(ours), path
        files += 1
    assert files > 100


def test_huge_piece_merges_like_bpe_openai(oracle: bpe_openai.Encoding) -> None:
    """A run of spaces is one piece: the merge must stay near-linear (a quadratic one
    would not finish on 400k bytes), and exact. benchmarks/token_bench.py times 1 MB."""
    spaces = " " * 400_000
    assert o200k.encoder().encode(spaces) == _oracle_ids(oracle, spaces)
    run = "日本語" * 20_000  # one 180 kB letter piece
    assert o200k.encoder().encode(run) == _oracle_ids(oracle, run)


def test_five_megabyte_minified_line(oracle: bpe_openai.Encoding) -> None:
    """bpe-openai refuses 1M characters; ours counts 5 MB. The unit starts with a digit
    and ends with a letter, so pieces never cross units and counts add up."""
    code = " ".join(text for _, text in _repository_texts()).replace("\n", ";")
    unit = "0" + code[:499_998] + "q"
    assert count_tokens(unit * 10) == 10 * len(_oracle_ids(oracle, unit))


def test_every_token_round_trips_through_the_vocabulary() -> None:
    vocab = o200k.encoder().vocab
    assert len(vocab) == 199_998
    assert all(vocab.rank(vocab.token(r)) == r for r in range(len(vocab)))
    assert vocab.rank(b"<|endoftext|>") == -1


def test_the_vocabulary_cache_loads_what_the_rank_file_gives_and_survives_damage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(o200k.CACHE_ENV, str(tmp_path))
    built, groups = o200k._load_parts()                 # decoded, then written
    path = o200k._cache_path(o200k._ranks_path())
    assert path.parent == tmp_path and path.is_file()
    cached, cached_groups = o200k._load_parts()         # read back
    assert cached_groups == groups == o200k._code_point_groups()
    assert len(cached) == len(built) == 199_998
    assert all(cached.rank(built.token(r)) == r for r in range(0, len(built), 97))
    path.write_bytes(path.read_bytes()[:100_000])      # a torn write: rebuilt, rewritten
    again, _ = o200k._load_parts()
    assert again.rank(b" world") == built.rank(b" world") >= 0
    assert o200k._read_cache(path) is not None


def _truncate_before(oracle: bpe_openai.Encoding, text: str, limit: int) -> str:
    """truncate_to_tokens as it was on bpe-openai's encoder (the behaviour to keep)."""
    if limit <= 0:
        return ""
    if len(_oracle_ids(oracle, text)) <= limit:
        return text
    out: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        n = len(_oracle_ids(oracle, line)) if line else 0
        if used + n > limit:
            break
        out.append(line)
        used += n
    if out:
        return "".join(out).rstrip("\n")
    return oracle.decode(_oracle_ids(oracle, text)[:limit])


@pytest.mark.parametrize("limit", [0, 1, 2, 5, 17, 60, 400])
def test_truncate_matches_the_bpe_openai_version(
    oracle: bpe_openai.Encoding, limit: int
) -> None:
    texts = [
        (REPO / "neuralmind" / "context" / "tokens.py").read_text(encoding="utf-8"),
        "one very long line " * 40,
        "日本語のテキスト" * 20 + "\nnext line",
        "😀👍🏽👨‍👩‍👧‍👦" * 10,
        "short",
    ]
    for text in texts:
        assert truncate_to_tokens(text, limit) == _truncate_before(oracle, text, limit)


def test_loading_does_not_import_bpe_openai() -> None:
    """Importing the bpe_openai package loads three rank dicts (~67 MB); we read its file."""
    code = (
        "import sys\n"
        "from neuralmind.context.tokens import count_tokens\n"
        "assert count_tokens('hello world') == 2\n"
        "print(sorted(m for m in sys.modules if m.startswith('bpe_openai')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
