"""Cross-file resolution on small real workspaces, parsed with real tree-sitter."""

from __future__ import annotations

from neuralmind.graph.extract import extract_file
from neuralmind.graph.languages import language_for
from neuralmind.graph.model import Edge, FileExtract
from neuralmind.graph.resolve import resolve


def _extracts(files: dict[str, str]) -> dict[str, FileExtract]:
    out = {}
    for path, text in files.items():
        lang = language_for(path)
        assert lang is not None, path
        out[path] = extract_file(path, text.encode(), lang)
        assert out[path].error == "", out[path].error
    return out


def _edges(files: dict[str, str], kind: str | None = None) -> set[tuple[str, str, str, bool, int]]:
    return {(e.source, e.target, e.kind, e.resolved, e.count)
            for e in resolve(_extracts(files)) if kind is None or e.kind == kind}


PY_PACKAGE = {
    "src/shop/__init__.py": "from .models import Order\n",
    "src/shop/models.py": (
        "from . import pricing\n"
        "from .pricing import discount as disc\n"
        "\n"
        "class Base:\n"
        "    def save(self):\n"
        "        return 1\n"
        "\n"
        "class Order(Base):\n"
        "    def total(self):\n"
        "        self.save()\n"
        "        self.save()\n"
        "        disc(1)\n"
        "        pricing.tax(2)\n"
        "        return audit_log()\n"
    ),
    "src/shop/pricing.py": (
        "def discount(x):\n    return x\n\n"
        "def tax(x):\n    return discount(x)\n"
    ),
    "src/shop/api/views.py": (
        "import shop.pricing\n"
        "from shop import Order\n"
        "from ..models import Base\n"
        "from shop.pricing import *\n"
        "\n"
        "def audit_log():\n    pass\n\n"
        "def checkout():\n"
        "    order = Order()\n"
        "    order.total()\n"
        "    shop.pricing.tax(3)\n"
        "    discount(4)\n"
        "    len([])\n"
        "\n"
        "class Special(Base):\n    pass\n"
    ),
}


def test_python_imports_resolve_to_files():
    imports = _edges(PY_PACKAGE, "imports")
    assert imports == {
        ("src/shop/__init__.py", "src/shop/models.py", "imports", True, 1),
        ("src/shop/models.py", "src/shop/pricing.py", "imports", True, 2),
        ("src/shop/api/views.py", "src/shop/pricing.py", "imports", True, 2),
        ("src/shop/api/views.py", "src/shop/__init__.py", "imports", True, 1),
        ("src/shop/api/views.py", "src/shop/models.py", "imports", True, 1),
    }


def test_python_calls_scope_import_and_heuristic():
    calls = _edges(PY_PACKAGE, "calls")
    m, p, v = "src/shop/models.py", "src/shop/pricing.py", "src/shop/api/views.py"
    assert calls == {
        (f"{m}::Order.total", f"{m}::Base.save", "calls", True, 2),        # self. via base
        (f"{m}::Order.total", f"{p}::discount", "calls", True, 1),         # aliased import
        (f"{m}::Order.total", f"{p}::tax", "calls", True, 1),              # module attribute
        (f"{m}::Order.total", f"{v}::audit_log", "calls", False, 1),       # unique name guess
        (f"{p}::tax", f"{p}::discount", "calls", True, 1),                 # same file
        (f"{v}::checkout", f"{m}::Order", "calls", True, 1),               # re-export in __init__
        (f"{v}::checkout", f"{m}::Order.total", "calls", False, 1),        # unique method guess
        (f"{v}::checkout", f"{p}::tax", "calls", True, 1),                 # dotted module path
        (f"{v}::checkout", f"{p}::discount", "calls", True, 1),            # wildcard import
    }


def test_python_inherits_across_files():
    inherits = _edges(PY_PACKAGE, "inherits")
    assert inherits == {
        ("src/shop/models.py::Order", "src/shop/models.py::Base", "inherits", True, 1),
        ("src/shop/api/views.py::Special", "src/shop/models.py::Base", "inherits", True, 1),
    }


def test_ambiguous_names_stay_unresolved():
    files = {
        "a.py": "def run():\n    pass\n",
        "b.py": "def run():\n    pass\n",
        "c.py": "def main():\n    run()\n",
    }
    assert _edges(files, "calls") == set()


def test_resolve_is_deterministic_and_sorted():
    first = resolve(_extracts(PY_PACKAGE))
    second = resolve(dict(reversed(list(_extracts(PY_PACKAGE).items()))))
    assert first == second
    assert first == sorted(first, key=lambda e: (e.source, e.kind, e.target))
    assert all(isinstance(e, Edge) for e in first)
