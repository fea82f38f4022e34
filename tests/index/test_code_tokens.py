"""Code-aware tokens: identifiers whole and split, dotted paths, digits, stems."""

from __future__ import annotations

from neuralmind.index.tokens import code_tokens, stem


def test_camel_and_snake_case_keep_the_whole_identifier() -> None:
    assert code_tokens("getAuthToken") == ["getauthtoken", "get", "auth", "token"]
    assert code_tokens("get_auth_token") == ["get_auth_token", "get", "auth", "token"]
    assert code_tokens("HTTPAdapter") == ["httpadapter", "http", "adapter"]
    assert code_tokens("CaseInsensitiveDict") == ["caseinsensitivedict", "case", "insensitive",
                                                  "dict"]


def test_dotted_paths_and_dunders() -> None:
    assert code_tokens("os.path.join") == ["os.path.join", "os", "path", "join"]
    assert code_tokens("__init__") == ["init"]
    toks = code_tokens("requests.adapters.HTTPAdapter.send")
    assert toks[0] == "requests.adapters.httpadapter.send"
    assert {"request", "adapter", "httpadapter", "send"} <= set(toks)


def test_digits_stopwords_and_prose() -> None:
    toks = code_tokens("If a POST gets a 302 or 303 back, how is it redirected?")
    assert toks == ["post", "get", "302", "303", "back", "redirect"]
    assert code_tokens("x = 1") == []          # single letters and digits carry nothing
    assert "http2" in code_tokens("use http2 here")


def test_stems_meet_in_the_middle() -> None:
    assert stem("cookies") == stem("cookie")
    assert stem("entries") == stem("entry")
    assert stem("headers") == "header"
    assert stem("running") == "run" and stem("stopped") == "stop"
    assert stem("class") == "class" and stem("status") == "status"
    assert code_tokens("Cookies") == code_tokens("cookie")


def test_a_long_text_is_scanned_in_pieces_with_the_same_tokens() -> None:
    """A text longer than TOKEN_SCAN_CHARS is cut at line breaks only: its tokens are its
    lines' tokens in order, whatever the words around the cuts (`a.b` dotted paths, long
    identifiers, numbers, a line longer than a piece)."""
    import random

    from neuralmind.config import TOKEN_SCAN_CHARS
    from neuralmind.index.tokens import _pieces

    rng = random.Random(15)
    words = ["os.path.join", "getAuthToken", "parse_HTTPResponse", "302", "x", "the", "é",
             "self.client.get", "a_b_c_d", "QuerySet", "9"]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
             for _ in range(3000)]
    lines.insert(1500, "longName" * (TOKEN_SCAN_CHARS // 4))    # one line of two pieces' size
    text = "\n".join(lines)
    assert len(_pieces(text)) > 3
    assert "".join(_pieces(text)) == text
    assert code_tokens(text) == [t for line in lines for t in code_tokens(line)]


def test_token_counts_are_the_counter_of_the_tokens_in_the_same_order() -> None:
    """`token_counts` counts a long text a scan piece at a time (STALL16): the same counts,
    and the same first-seen order (a document's term order is kept in the index), as one
    Counter over `code_tokens`; a short text the same too."""
    import random
    from collections import Counter

    from neuralmind.config import TOKEN_SCAN_CHARS
    from neuralmind.index.tokens import _pieces, token_counts

    rng = random.Random(16)
    words = ["os.path.join", "getAuthToken", "302", "x", "the", "self.client.get", "QuerySet",
             "cookies", "redirected"] + [f"name{i}" for i in range(400)]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 30)))
             for _ in range(4000)]
    text = "\n".join(lines)
    assert len(_pieces(text)) > 3
    for t in (text, text[:TOKEN_SCAN_CHARS - 10]):
        expected = Counter(code_tokens(t))
        assert list(token_counts(t).items()) == list(expected.items())
