"""Java, C#, C and C++ extraction with real tree-sitter grammars."""

from __future__ import annotations

from neuralmind.graph.extract import extract_file
from neuralmind.graph.model import FileExtract

ORDER_JAVA = b"""package com.acme.shop;

import com.acme.util.Helper;
import com.acme.model.*;

/**
 * An order placed by a customer.
 */
public class Order extends Entity implements Comparable<Order> {
    private int total;

    /** Creates an empty order. */
    public Order() {
        super();
    }

    // Adds an item.
    @Override
    public int add(Item item) {
        Helper.log(item);
        this.recalc();
        return new Line(item).price();
    }

    public int add(int qty, Item item) {
        return add(item) * qty;
    }

    private void recalc() {}
}
"""

ORDER_CS = b"""using System;
using Acme.Util;

namespace Acme.Shop
{
    /// <summary>An order placed by a customer.</summary>
    public class Order : Entity, IComparable
    {
        // Adds an item.
        public int Add(Item item)
        {
            Helper.Log(item);
            return Recalc();
        }

        private int Recalc() => 0;
    }

    public interface IPriced : IComparable { decimal Price(); }
}
"""

SHAPE_HPP = b"""#include "base.hpp"
#include <vector>

namespace geo {

// A drawable shape.
class Shape : public Base {
public:
    /* Area in square units. */
    virtual double area() const;
    void draw() { render(this->area()); }
};

double Shape::area() const {
    return compute(2.0);
}

}  // namespace geo
"""

LIST_C = b"""#include "list.h"
#include <stdlib.h>

/* A singly linked list node. */
struct node {
    int value;
    struct node *next;
};

// Pushes a value.
struct node *push(struct node *head, int value) {
    struct node *n = malloc(sizeof *n);
    return link(n, head);
}

static int length(struct node *head) { return head ? 1 + length(head->next) : 0; }
"""


def _nodes(fe: FileExtract) -> list[tuple]:
    return [(n.kind, n.qualname, n.start_line, n.end_line, n.signature, n.docstring)
            for n in fe.nodes[1:]]


def _refs(fe: FileExtract, kind: str) -> list[tuple]:
    return [(r.source.partition("::")[2], r.target, r.line, r.names)
            for r in fe.references if r.kind == kind]


def _contains(fe: FileExtract) -> list[tuple[str, str]]:
    return [(e.source.partition("::")[2], e.target.partition("::")[2]) for e in fe.edges]


def test_java_nodes_overloads_and_references():
    fe = extract_file("src/main/java/com/acme/shop/Order.java", ORDER_JAVA, "java")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("class", "Order", 9, 30, "public class Order extends Entity implements Comparable<Order>",
         "An order placed by a customer."),
        ("method", "Order.Order", 13, 15, "public Order()", "Creates an empty order."),
        ("method", "Order.add", 18, 23, "public int add(Item item)", "Adds an item."),
        ("method", "Order.add#2", 25, 27, "public int add(int qty, Item item)", ""),
        ("method", "Order.recalc", 29, 29, "private void recalc()", ""),
    ]
    assert fe.nodes[3].id == "src/main/java/com/acme/shop/Order.java::Order.add"
    assert _contains(fe) == [("", "Order"), ("Order", "Order.Order"), ("Order", "Order.add"),
                             ("Order", "Order.add#2"), ("Order", "Order.recalc")]
    assert _refs(fe, "imports") == [
        ("", "com.acme.util", 3, [("Helper", "Helper")]),
        ("", "com.acme.model", 4, [("*", "")]),
    ]
    assert _refs(fe, "inherits") == [("Order", "Entity", 9, [])]
    assert _refs(fe, "implements") == [("Order", "Comparable", 9, [])]
    assert _refs(fe, "calls") == [
        ("Order.add", "Helper.log", 20, []),
        ("Order.add", "this.recalc", 21, []),
        ("Order.add", ".price", 22, []),
        ("Order.add", "Line", 22, []),
        ("Order.add#2", "add", 26, []),
    ]


def test_csharp_namespaces_are_modules():
    fe = extract_file("Shop/Order.cs", ORDER_CS, "csharp")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("module", "Acme.Shop", 4, 20, "namespace Acme.Shop", ""),
        ("class", "Acme.Shop.Order", 7, 17, "public class Order : Entity, IComparable",
         "An order placed by a customer."),
        ("method", "Acme.Shop.Order.Add", 10, 14, "public int Add(Item item)", "Adds an item."),
        ("method", "Acme.Shop.Order.Recalc", 16, 16, "private int Recalc()", ""),
        ("interface", "Acme.Shop.IPriced", 19, 19, "public interface IPriced : IComparable", ""),
        ("method", "Acme.Shop.IPriced.Price", 19, 19, "decimal Price()", ""),
    ]
    assert _contains(fe)[:3] == [("", "Acme.Shop"), ("Acme.Shop", "Acme.Shop.Order"),
                                 ("Acme.Shop.Order", "Acme.Shop.Order.Add")]
    assert _refs(fe, "imports") == [("", "System", 1, [("*", "")]),
                                    ("", "Acme.Util", 2, [("*", "")])]
    assert _refs(fe, "inherits") == [("Acme.Shop.Order", "Entity", 7, []),
                                     ("Acme.Shop.IPriced", "IComparable", 19, [])]
    assert _refs(fe, "implements") == [("Acme.Shop.Order", "IComparable", 7, [])]
    assert _refs(fe, "calls") == [("Acme.Shop.Order.Add", "Helper.Log", 12, []),
                                  ("Acme.Shop.Order.Add", "Recalc", 13, [])]


def test_csharp_file_scoped_namespace_covers_the_file():
    fe = extract_file("X.cs", b"namespace Acme.Flat;\n\nclass X\n{\n    void Run() {}\n}\n",
                      "csharp")
    assert [(n.qualname, n.start_line, n.end_line) for n in fe.nodes[1:]] == [
        ("Acme.Flat", 1, 6), ("Acme.Flat.X", 3, 6), ("Acme.Flat.X.Run", 5, 5)]


def test_cpp_classes_namespaces_and_out_of_line_methods():
    fe = extract_file("include/shape.hpp", SHAPE_HPP, "cpp")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("module", "geo", 4, 18, "namespace geo", ""),
        ("class", "geo.Shape", 7, 12, "class Shape : public Base", "A drawable shape."),
        ("method", "geo.Shape.area", 10, 10, "virtual double area() const",
         "Area in square units."),
        ("method", "geo.Shape.draw", 11, 11, "void draw()", ""),
        ("method", "geo.Shape.area#2", 14, 16, "double Shape::area() const", ""),
    ]
    assert _contains(fe) == [("", "geo"), ("geo", "geo.Shape"), ("geo.Shape", "geo.Shape.area"),
                             ("geo.Shape", "geo.Shape.draw"), ("geo.Shape", "geo.Shape.area#2")]
    assert _refs(fe, "imports") == [("", "base.hpp", 1, [("*", "")]),
                                    ("", "<vector>", 2, [("*", "")])]
    assert _refs(fe, "inherits") == [("geo.Shape", "Base", 7, [])]
    assert _refs(fe, "calls") == [("geo.Shape.draw", "render", 11, []),
                                  ("geo.Shape.draw", "this.area", 11, []),
                                  ("geo.Shape.area#2", "compute", 15, [])]


def test_c_functions_and_structs():
    fe = extract_file("src/list.c", LIST_C, "c")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("struct", "node", 5, 8, "struct node", "A singly linked list node."),
        ("function", "push", 11, 14, "struct node *push(struct node *head, int value)",
         "Pushes a value."),
        ("function", "length", 16, 16, "static int length(struct node *head)", ""),
    ]
    assert _refs(fe, "imports") == [("", "list.h", 1, [("*", "")]),
                                    ("", "<stdlib.h>", 2, [("*", "")])]
    assert _refs(fe, "calls") == [("push", "malloc", 12, []), ("push", "link", 13, []),
                                  ("length", "length", 16, [])]


def test_cpp_header_with_h_extension_is_parsed_as_cpp():
    src = b"#pragma once\nnamespace geo {\nclass Point {\npublic:\n    int x() const;\n};\n}\n"
    fe = extract_file("include/point.h", src, "c")
    assert fe.language == "cpp" and not fe.partial
    assert [(n.kind, n.qualname, n.language) for n in fe.nodes[1:]] == [
        ("module", "geo", "cpp"), ("class", "geo.Point", "cpp"), ("method", "geo.Point.x", "cpp")]
    plain = extract_file("include/list.h", b"struct node { int v; };\nint push(int v);\n", "c")
    assert plain.language == "c"
