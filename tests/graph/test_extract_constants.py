"""Module constants are nodes (kind `constant`): each language's own notion of one, at the
top level only, with the comment above it as the docstring (issue #14, RETR13)."""

from __future__ import annotations

from neuralmind.graph.extract import extract_file
from neuralmind.graph.model import NODE_KINDS


def _constants(path: str, text: str, language: str) -> dict[str, tuple[str, str]]:
    fe = extract_file(path, text.encode(), language)
    assert not fe.error
    return {n.qualname: (n.signature, n.docstring) for n in fe.nodes if n.kind == "constant"}


def test_constant_is_a_node_kind():
    assert "constant" in NODE_KINDS


def test_typescript_exported_data_consts_and_upper_case_consts():
    src = """import {HttpMethod} from './options.js';

export const requestMethods = ['get', 'post'] as const;

// The maximum value of a 32bit int (see issue #117)
export const maxSafeTimeout = 2_147_483_647;

export const stop = Symbol('stop');
const DEFAULT_LIMIT = 2;
const helper = 3;
export let mutable = 1;
export const retry = () => 1;
export const options = {a: 1};
function f() { const INNER = 1; }
"""
    got = _constants("source/core/constants.ts", src, "typescript")
    assert set(got) == {"requestMethods", "maxSafeTimeout", "stop", "DEFAULT_LIMIT"}
    assert got["maxSafeTimeout"] == ("const maxSafeTimeout = 2_147_483_647",
                                     "The maximum value of a 32bit int (see issue #117)")


def test_javascript_require_is_not_a_constant():
    src = "const debug = require('debug');\nconst MAX = 10;\nmodule.exports = {MAX};\n"
    assert set(_constants("lib/a.js", src, "javascript")) == {"MAX"}


def test_python_upper_case_module_assignments():
    src = """import os

# Seconds before a request gives up.
DEFAULT_TIMEOUT = 30
_CACHE_SIZE: int = 128
__all__ = ["x"]
logger = object()


def f():
    LOCAL = 1


class C:
    ATTR = 2
"""
    got = _constants("pkg/a.py", src, "python")
    assert set(got) == {"DEFAULT_TIMEOUT", "_CACHE_SIZE"}
    assert got["DEFAULT_TIMEOUT"] == ("DEFAULT_TIMEOUT = 30", "Seconds before a request gives up.")
    assert got["_CACHE_SIZE"][0] == "_CACHE_SIZE: int = 128"


def test_go_top_level_consts_single_and_grouped():
    src = """package gin

// DebugMode indicates gin mode is debug.
const DebugMode = "debug"

// Content types.
const (
\t// MIMEJSON is the JSON content type.
\tMIMEJSON = "application/json"
\tMIMEXML = "application/xml"
)

func f() { const inner = 1 }
"""
    got = _constants("mode.go", src, "go")
    assert set(got) == {"DebugMode", "MIMEJSON", "MIMEXML"}
    assert got["DebugMode"][1] == "DebugMode indicates gin mode is debug."
    assert got["MIMEJSON"][1] == "MIMEJSON is the JSON content type."
    assert got["MIMEXML"][1] == ""


def test_rust_top_level_const_and_static_not_associated_consts():
    src = """/// Default shell.
pub const DEFAULT_SHELL: &str = "sh";
static COUNTER: u8 = 0;

impl Recipe {
    const LIMIT: usize = 3;
}

fn f() { const LOCAL: u8 = 1; }
"""
    got = _constants("src/lib.rs", src, "rust")
    assert set(got) == {"DEFAULT_SHELL", "COUNTER"}
    assert got["DEFAULT_SHELL"] == ('pub const DEFAULT_SHELL: &str = "sh"', "Default shell.")
