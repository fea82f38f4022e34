"""JavaScript, TypeScript and TSX extraction with real tree-sitter grammars."""

from __future__ import annotations

from neuralmind.graph.extract import extract_file
from neuralmind.graph.model import FileExtract

SHAPES_TS = b"""import { Base, area as computeArea } from './base';
import * as geo from '../geo';

/**
 * A circle on the canvas.
 */
export class Circle extends Base implements Drawable {
  // Radius in pixels.
  draw(ctx: Context): void {
    this.scale(2);
    geo.project(computeArea(this));
  }
}

export interface Drawable {
  draw(ctx: Context): void;
}

// Build a unit circle.
export const unit = (r: number): Circle => {
  return new Circle(r);
};
"""

APP_TSX = b"""import React from 'react';
import { Circle } from './shapes';

/** Renders one circle. */
export function CircleView(props: Props) {
  const c = new Circle(props.r);
  return <svg>{render(c)}</svg>;
}
"""

UTIL_JS = b"""const path = require('path');
const { helper } = require('./helper');

// Joins parts.
function join(a, b) {
  return helper(path.join(a, b));
}

class Cache extends Map {
  get(key) { return join(key, 'x'); }
}

module.exports = { join, Cache };
"""


def _nodes(fe: FileExtract) -> list[tuple]:
    return [(n.kind, n.qualname, n.start_line, n.end_line, n.signature, n.docstring)
            for n in fe.nodes[1:]]


def _refs(fe: FileExtract, kind: str) -> list[tuple]:
    return [(r.source.partition("::")[2], r.target, r.line, r.names)
            for r in fe.references if r.kind == kind]


def test_typescript_nodes_and_references():
    fe = extract_file("src/shapes.ts", SHAPES_TS, "typescript")
    assert fe.error == "" and not fe.partial
    assert fe.nodes[0].id == "src/shapes.ts" and fe.nodes[0].end_line == 22
    assert _nodes(fe) == [
        ("class", "Circle", 7, 13, "class Circle extends Base implements Drawable",
         "A circle on the canvas."),
        ("method", "Circle.draw", 9, 12, "draw(ctx: Context): void", "Radius in pixels."),
        ("interface", "Drawable", 15, 17, "interface Drawable", ""),
        ("method", "Drawable.draw", 16, 16, "draw(ctx: Context): void", ""),
        ("function", "unit", 20, 22, "const unit = (r: number): Circle =>",
         "Build a unit circle."),
    ]
    assert [(e.source, e.target) for e in fe.edges] == [
        ("src/shapes.ts", "src/shapes.ts::Circle"),
        ("src/shapes.ts::Circle", "src/shapes.ts::Circle.draw"),
        ("src/shapes.ts", "src/shapes.ts::Drawable"),
        ("src/shapes.ts::Drawable", "src/shapes.ts::Drawable.draw"),
        ("src/shapes.ts", "src/shapes.ts::unit"),
    ]
    assert _refs(fe, "imports") == [
        ("", "./base", 1, [("Base", "Base"), ("area", "computeArea")]),
        ("", "../geo", 2, [("*", "geo")]),
    ]
    assert _refs(fe, "inherits") == [("Circle", "Base", 7, [])]
    assert _refs(fe, "implements") == [("Circle", "Drawable", 7, [])]
    assert _refs(fe, "calls") == [
        ("Circle.draw", "this.scale", 10, []),
        ("Circle.draw", "geo.project", 11, []),
        ("Circle.draw", "computeArea", 11, []),
        ("unit", "Circle", 21, []),
    ]


def test_tsx_component():
    fe = extract_file("src/app.tsx", APP_TSX, "tsx")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("function", "CircleView", 5, 8, "function CircleView(props: Props)",
         "Renders one circle."),
    ]
    assert _refs(fe, "imports") == [
        ("", "react", 1, [("default", "React")]),
        ("", "./shapes", 2, [("Circle", "Circle")]),
    ]
    assert _refs(fe, "calls") == [("CircleView", "Circle", 6, []),
                                  ("CircleView", "render", 7, [])]


def test_javascript_commonjs():
    fe = extract_file("lib/util.js", UTIL_JS, "javascript")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("function", "join", 5, 7, "function join(a, b)", "Joins parts."),
        ("class", "Cache", 9, 11, "class Cache extends Map", ""),
        ("method", "Cache.get", 10, 10, "get(key)", ""),
    ]
    assert _refs(fe, "imports") == [
        ("", "path", 1, [("*", "path")]),
        ("", "./helper", 2, [("helper", "helper")]),
    ]
    assert _refs(fe, "inherits") == [("Cache", "Map", 9, [])]
    assert [r for r in _refs(fe, "calls") if r[0]] == [
        ("join", "helper", 6, []),
        ("join", "path.join", 6, []),
        ("Cache.get", "join", 10, []),
    ]


def test_typescript_syntax_error_is_partial():
    fe = extract_file("bad.ts", b"export function ok() { return 1; }\nclass {{{ broken\n",
                      "typescript")
    assert fe.partial and fe.error == ""
    assert "bad.ts::ok" in [n.id for n in fe.nodes]


OLD_STYLE_JS = b"""'use strict';
{
    // The select box.
    const SelectBox = {
        cache: {},
        // Initialise.
        init: function(id) {
            SelectBox.redisplay(id);
        },
        redisplay(id) { draw(id); }
    };
}
function Foo() {}
Foo.prototype.bar = function() { return this.baz(); };
module.exports.helper = (x) => x;
class K { [Symbol.iterator]() {} }
"""


def test_object_literal_and_prototype_functions():
    fe = extract_file("static/select.js", OLD_STYLE_JS, "javascript")
    assert [(n.kind, n.qualname, n.start_line, n.docstring) for n in fe.nodes[1:]] == [
        ("method", "SelectBox.init", 7, "Initialise."),
        ("method", "SelectBox.redisplay", 10, ""),
        ("function", "Foo", 13, ""),
        ("method", "Foo.bar", 14, ""),
        ("function", "helper", 15, ""),
        ("class", "K", 16, ""),
    ]
    assert [(e.source, e.target) for e in fe.edges if e.source != "static/select.js"] == [
        ("static/select.js::Foo", "static/select.js::Foo.bar")]
    assert _refs(fe, "calls") == [
        ("SelectBox.init", "SelectBox.redisplay", 8, []),
        ("SelectBox.redisplay", "draw", 10, []),
        ("Foo.bar", "this.baz", 14, []),
    ]


KOA_STYLE_JS = b"""'use strict';

const Emitter = require('events');

/**
 * Expose `Application` class.
 * Inherits from `Emitter.prototype`.
 */

module.exports = class Application extends Emitter {
  /**
   * Shorthand for creating a server.
   *
   * @api public
   */

  listen(...args) {
    return args;
  }

  /* not a doc block */

  use(fn) {
    return fn;
  }
};
"""


def test_a_commonjs_class_expression_and_its_jsdoc_across_a_blank_line():
    """koa's style: `module.exports = class X { ... }`, each JSDoc block a blank line above
    its definition (as JSDoc reads it); a plain block comment there documents nothing."""
    fe = extract_file("lib/application.js", KOA_STYLE_JS, "javascript")
    assert [(n.kind, n.qualname, n.docstring) for n in fe.nodes if n.kind != "file"] == [
        ("class", "Application",
         "Expose `Application` class.\nInherits from `Emitter.prototype`."),
        ("method", "Application.listen", "Shorthand for creating a server.\n\n@api public"),
        ("method", "Application.use", ""),
    ]
    assert _refs(fe, "inherits") == [("Application", "Emitter", 10, [])]
