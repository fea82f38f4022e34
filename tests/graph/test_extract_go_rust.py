"""Go and Rust extraction with real tree-sitter grammars."""

from __future__ import annotations

from neuralmind.graph.extract import extract_file
from neuralmind.graph.model import FileExtract

SERVER_GO = b"""// Package api serves HTTP.
package api

import (
	"fmt"

	"example.com/shop/store"
)

// Server answers requests.
type Server struct {
	store.Base
	name string
}

// Handler handles one route.
type Handler interface {
	Serve() error
}

// Start runs the server
// until stopped.
func (s *Server) Start(port int) error {
	s.log("starting")
	store.Open(fmt.Sprint(port))
	return nil
}

func (s Server) log(msg string) {}

func NewServer() *Server {
	return &Server{name: helper()}
}
"""

LIB_RS = b"""//! Geometry helpers.
mod shapes;
use crate::shapes::{Circle, area as compute};

/// A point in the plane.
#[derive(Debug, Clone)]
pub struct Point {
    x: f64,
}

/// Something with an area.
pub trait Shape: Named {
    fn area(&self) -> f64;
}

impl Point {
    /// Creates a point.
    pub fn new(x: f64) -> Self {
        Self::check(x);
        Point { x }
    }

    fn check(x: f64) {}
}

impl Shape for Point {
    fn area(&self) -> f64 {
        compute(shapes::unit())
    }
}

pub mod util {
    pub fn clamp() {}
}
"""


def _nodes(fe: FileExtract) -> list[tuple]:
    return [(n.kind, n.qualname, n.start_line, n.end_line, n.signature, n.docstring)
            for n in fe.nodes[1:]]


def _refs(fe: FileExtract, kind: str) -> list[tuple]:
    return [(r.source.partition("::")[2], r.target, r.line, r.names)
            for r in fe.references if r.kind == kind]


def _contains(fe: FileExtract) -> list[tuple[str, str]]:
    return [(e.source.partition("::")[2], e.target.partition("::")[2]) for e in fe.edges]


def test_go_nodes_and_references():
    fe = extract_file("api/server.go", SERVER_GO, "go")
    assert fe.error == "" and not fe.partial
    assert fe.nodes[0].docstring == "Package api serves HTTP."
    assert _nodes(fe) == [
        ("struct", "Server", 11, 14, "type Server struct", "Server answers requests."),
        ("interface", "Handler", 17, 19, "type Handler interface", "Handler handles one route."),
        ("method", "Server.Start", 23, 27, "func (s *Server) Start(port int) error",
         "Start runs the server\nuntil stopped."),
        ("method", "Server.log", 29, 29, "func (s Server) log(msg string)", ""),
        ("function", "NewServer", 31, 33, "func NewServer() *Server", ""),
    ]
    assert _contains(fe) == [("", "Server"), ("", "Handler"), ("Server", "Server.Start"),
                             ("Server", "Server.log"), ("", "NewServer")]
    assert _refs(fe, "imports") == [
        ("", "fmt", 5, [("*", "fmt")]),
        ("", "example.com/shop/store", 7, [("*", "store")]),
    ]
    assert _refs(fe, "inherits") == [("Server", "store.Base", 11, [])]
    assert _refs(fe, "calls") == [
        ("Server.Start", "self.log", 24, []),             # the receiver is `self`
        ("Server.Start", "store.Open", 25, []),
        ("Server.Start", "fmt.Sprint", 25, []),
        ("NewServer", "helper", 32, []),
    ]


def test_go_import_aliases():
    src = b'package m\nimport (\n\tu "x.io/util/v2"\n\t. "x.io/dot"\n\t_ "x.io/side"\n)\n'
    fe = extract_file("m.go", src, "go")
    assert _refs(fe, "imports") == [
        ("", "x.io/util/v2", 3, [("*", "u")]),
        ("", "x.io/dot", 4, [("*", "")]),
        ("", "x.io/side", 5, []),
    ]


def test_rust_nodes_and_references():
    fe = extract_file("src/lib.rs", LIB_RS, "rust")
    assert fe.error == "" and not fe.partial
    assert fe.nodes[0].docstring == "Geometry helpers."
    assert _nodes(fe) == [
        ("struct", "Point", 7, 9, "pub struct Point", "A point in the plane."),
        ("trait", "Shape", 12, 14, "pub trait Shape: Named", "Something with an area."),
        ("method", "Shape.area", 13, 13, "fn area(&self) -> f64", ""),
        ("method", "Point.new", 18, 21, "pub fn new(x: f64) -> Self", "Creates a point."),
        ("method", "Point.check", 23, 23, "fn check(x: f64)", ""),
        ("method", "Point.area", 27, 29, "fn area(&self) -> f64", ""),
        ("module", "util", 32, 34, "pub mod util", ""),
        ("function", "util.clamp", 33, 33, "pub fn clamp()", ""),
    ]
    assert _contains(fe) == [
        ("", "Point"), ("", "Shape"), ("Shape", "Shape.area"), ("Point", "Point.new"),
        ("Point", "Point.check"), ("Point", "Point.area"), ("", "util"), ("util", "util.clamp"),
    ]
    assert _refs(fe, "imports") == [
        ("", "self::shapes", 2, [("*", "shapes")]),
        ("", "crate::shapes", 3, [("Circle", "Circle"), ("area", "compute")]),
    ]
    assert _refs(fe, "inherits") == [("Shape", "Named", 12, [])]
    assert _refs(fe, "implements") == [("Point", "Shape", 26, [])]
    assert _refs(fe, "calls") == [
        ("Point.new", "Self.check", 19, []),
        ("Point.area", "compute", 28, []),
        ("Point.area", "shapes.unit", 28, []),
    ]


def test_rust_use_forms():
    src = b"use a::b::{self, c::D, e as f};\nuse super::x::*;\nuse std::io;\n"
    fe = extract_file("src/m.rs", src, "rust")
    assert _refs(fe, "imports") == [
        ("", "a", 1, [("b", "b")]),
        ("", "a::b::c", 1, [("D", "D")]),
        ("", "a::b", 1, [("e", "f")]),
        ("", "super::x", 2, [("*", "")]),
        ("", "std", 3, [("io", "io")]),
    ]
