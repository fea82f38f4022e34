"""Ruby, PHP and Markdown extraction with real tree-sitter grammars."""

from __future__ import annotations

from neuralmind.graph.extract import extract_file
from neuralmind.graph.model import FileExtract

ORDER_RB = b"""require 'json'
require_relative 'models/base'

# Shop domain.
module Shop
  # An order placed by a customer.
  class Order < Models::Base
    include Comparable

    # Adds an item and
    # returns the total.
    def add(item)
      log(item)
      self.recalc
      Line.new(item).price
    end

    def self.build(attrs) = new(attrs)
  end
end
"""

ORDER_PHP = b"""<?php
namespace App\\Models;

use App\\Util\\Helper;
use App\\Contracts\\{Priced, Named as N};
require_once __DIR__ . '/../bootstrap.php';

/**
 * An order placed by a customer.
 */
class Order extends Model implements Priced, N
{
    use HasItems;

    // Adds an item.
    public function add($item)
    {
        Helper::log($item);
        $this->recalc();
        return (new Line($item))->price() + total($item);
    }
}

function total($item) { return 1; }
"""

README_MD = b"""# NeuralMind

Local code context
for agents.

## Install

Run `pip install .`.

### From source

Clone first.

## Install

Again.
"""


def _nodes(fe: FileExtract) -> list[tuple]:
    return [(n.kind, n.qualname, n.start_line, n.end_line, n.signature, n.docstring)
            for n in fe.nodes[1:]]


def _refs(fe: FileExtract, kind: str) -> list[tuple]:
    return [(r.source.partition("::")[2], r.target, r.line, r.names)
            for r in fe.references if r.kind == kind]


def _contains(fe: FileExtract) -> list[tuple[str, str]]:
    return [(e.source.partition("::")[2], e.target.partition("::")[2]) for e in fe.edges]


def test_ruby_modules_classes_methods():
    fe = extract_file("lib/shop/order.rb", ORDER_RB, "ruby")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("module", "Shop", 5, 20, "module Shop", "Shop domain."),
        ("class", "Shop.Order", 7, 19, "class Order < Models::Base",
         "An order placed by a customer."),
        ("method", "Shop.Order.add", 12, 16, "def add(item)",
         "Adds an item and\nreturns the total."),
        ("method", "Shop.Order.build", 18, 18, "def self.build(attrs)", ""),
    ]
    assert _contains(fe) == [("", "Shop"), ("Shop", "Shop.Order"),
                             ("Shop.Order", "Shop.Order.add"), ("Shop.Order", "Shop.Order.build")]
    assert _refs(fe, "imports") == [("", "json", 1, []), ("", "./models/base", 2, [])]
    assert _refs(fe, "inherits") == [("Shop.Order", "Models::Base", 7, [])]
    assert _refs(fe, "implements") == [("Shop.Order", "Comparable", 7, [])]
    assert _refs(fe, "calls") == [
        ("Shop.Order.add", "log", 13, []),
        ("Shop.Order.add", "self.recalc", 14, []),
        ("Shop.Order.add", "Line", 15, []),
        ("Shop.Order.add", ".price", 15, []),
        ("Shop.Order.build", "new", 18, []),
    ]


def test_php_namespace_class_and_uses():
    fe = extract_file("app/Models/Order.php", ORDER_PHP, "php")
    assert fe.error == "" and not fe.partial
    assert _nodes(fe) == [
        ("module", "App.Models", 2, 24, "namespace App\\Models", ""),
        ("class", "App.Models.Order", 11, 22, "class Order extends Model implements Priced, N",
         "An order placed by a customer."),
        ("method", "App.Models.Order.add", 16, 21, "public function add($item)", "Adds an item."),
        ("function", "App.Models.total", 24, 24, "function total($item)", ""),
    ]
    assert _contains(fe) == [("", "App.Models"), ("App.Models", "App.Models.Order"),
                             ("App.Models.Order", "App.Models.Order.add"),
                             ("App.Models", "App.Models.total")]
    assert _refs(fe, "imports") == [
        ("", "App.Util", 4, [("Helper", "Helper")]),
        ("", "App.Contracts", 5, [("Priced", "Priced"), ("Named", "N")]),
        ("", "../bootstrap.php", 6, []),
    ]
    assert _refs(fe, "inherits") == [("App.Models.Order", "Model", 11, [])]
    assert _refs(fe, "implements") == [("App.Models.Order", "Priced", 11, []),
                                       ("App.Models.Order", "N", 11, []),
                                       ("App.Models.Order", "HasItems", 11, [])]
    assert _refs(fe, "calls") == [
        ("App.Models.Order.add", "Helper.log", 18, []),
        ("App.Models.Order.add", "this.recalc", 19, []),
        ("App.Models.Order.add", ".price", 20, []),
        ("App.Models.Order.add", "Line", 20, []),
        ("App.Models.Order.add", "total", 20, []),
    ]


def test_markdown_sections_by_heading_path():
    fe = extract_file("README.md", README_MD, "markdown")
    assert fe.error == "" and not fe.partial
    assert fe.nodes[0].docstring == "Local code context for agents."
    assert _nodes(fe) == [
        ("section", "NeuralMind", 1, 16, "# NeuralMind", "Local code context for agents."),
        ("section", "NeuralMind/Install", 6, 13, "## Install", "Run `pip install .`."),
        ("section", "NeuralMind/Install/From source", 10, 13, "### From source", "Clone first."),
        ("section", "NeuralMind/Install#2", 14, 16, "## Install", "Again."),
    ]
    assert [n.id for n in fe.nodes[1:3]] == ["README.md::NeuralMind", "README.md::NeuralMind/Install"]
    assert _contains(fe) == [("", "NeuralMind"), ("NeuralMind", "NeuralMind/Install"),
                             ("NeuralMind/Install", "NeuralMind/Install/From source"),
                             ("NeuralMind", "NeuralMind/Install#2")]
    assert fe.references == []


def test_markdown_without_headings():
    fe = extract_file("notes.md", b"just text\n", "markdown")
    assert [n.kind for n in fe.nodes] == ["file"] and fe.error == ""
