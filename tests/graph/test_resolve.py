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


# --- other languages ---------------------------------------------------------------------


JS_WORKSPACE = {
    'web/src/base.ts': (
        'export class Base {\n'
        '  scale(n: number) { return n; }\n'
        '}\n'
        'export function area(x: unknown) { return 1; }\n'
    ),
    'web/src/shapes.ts': (
        "import { Base, area as computeArea } from './base';\n"
        "import * as geo from '../lib/geo';\n"
        'export class Circle extends Base {\n'
        '  draw() {\n'
        '    this.scale(2);\n'
        '    geo.project(computeArea(this));\n'
        '  }\n'
        '}\n'
    ),
    'web/lib/geo/index.js': (
        'export function project(x) { return x; }\n'
    ),
    'web/src/app.tsx': (
        "import Circle from './shapes.js';\n"
        "import { Circle as C2 } from './shapes';\n"
        'export function View() { return new C2(); }\n'
    ),
}


def test_js_ts_relative_imports_with_extension_and_index_resolution():
    b, s, g, a = ("web/src/base.ts", "web/src/shapes.ts", "web/lib/geo/index.js",
                  "web/src/app.tsx")
    assert _edges(JS_WORKSPACE) == {
        (s, b, "imports", True, 1),
        (s, g, "imports", True, 1),                        # directory -> index.js
        (a, s, "imports", True, 2),                        # './shapes.js' is shapes.ts
        (f"{s}::Circle", f"{b}::Base", "inherits", True, 1),
        (f"{s}::Circle.draw", f"{b}::Base.scale", "calls", True, 1),
        (f"{s}::Circle.draw", f"{b}::area", "calls", True, 1),
        (f"{s}::Circle.draw", f"{g}::project", "calls", True, 1),
        (f"{a}::View", f"{s}::Circle", "calls", True, 1),
    }


GO_WORKSPACE = {
    'svc/store/store.go': (
        'package store\n'
        '\n'
        'type Base struct{}\n'
        '\n'
        'func Open(dsn string) error { return connect(dsn) }\n'
    ),
    'svc/store/conn.go': (
        'package store\n'
        '\n'
        'func connect(dsn string) error { return nil }\n'
    ),
    'svc/api/server.go': (
        'package api\n'
        '\n'
        'import (\n'
        '\t"fmt"\n'
        '\t"example.com/svc/store"\n'
        ')\n'
        '\n'
        'type Server struct {\n'
        '\tstore.Base\n'
        '}\n'
        '\n'
        'func (s *Server) Start() {\n'
        '\ts.log()\n'
        '\tstore.Open(fmt.Sprint(1))\n'
        '}\n'
        '\n'
        'func (s *Server) log() {}\n'
    ),
}


def test_go_package_import_reaches_every_file_of_the_package():
    srv, store, conn = "svc/api/server.go", "svc/store/store.go", "svc/store/conn.go"
    assert _edges(GO_WORKSPACE) == {
        (srv, conn, "imports", True, 1),
        (srv, store, "imports", True, 1),
        (f"{srv}::Server", f"{store}::Base", "inherits", True, 1),   # embedded struct
        (f"{srv}::Server.Start", f"{store}::Open", "calls", True, 1),
        (f"{srv}::Server.Start", f"{srv}::Server.log", "calls", True, 1),   # via receiver
        (f"{store}::Open", f"{conn}::connect", "calls", True, 1),     # same package
    }


RUST_WORKSPACE = {
    'crate/src/lib.rs': (
        'mod shapes;\n'
        'pub mod util;\n'
        'use crate::shapes::{Circle, area as compute};\n'
        '\n'
        'pub struct Point;\n'
        '\n'
        'impl shapes::Shape for Point {\n'
        '    fn area(&self) -> f64 { compute(util::unit()) }\n'
        '}\n'
    ),
    'crate/src/shapes.rs': (
        'pub trait Shape { fn area(&self) -> f64; }\n'
        'pub struct Circle;\n'
        'pub fn area() -> f64 { 0.0 }\n'
        'mod inner;\n'
    ),
    'crate/src/shapes/inner.rs': (
        'use super::Circle;\n'
        'use crate::util::unit;\n'
        'pub fn f() { unit(); }\n'
    ),
    'crate/src/util/mod.rs': (
        'pub fn unit() -> f64 { 1.0 }\n'
    ),
}


def test_rust_mod_and_use_within_the_crate():
    lib, shapes, inner, util = ("crate/src/lib.rs", "crate/src/shapes.rs",
                                "crate/src/shapes/inner.rs", "crate/src/util/mod.rs")
    assert _edges(RUST_WORKSPACE) == {
        (lib, shapes, "imports", True, 2),                 # mod shapes; use crate::shapes::..
        (lib, util, "imports", True, 1),                   # pub mod util; -> util/mod.rs
        (shapes, inner, "imports", True, 1),               # mod inner; inside shapes.rs
        (inner, shapes, "imports", True, 1),               # use super::Circle
        (inner, util, "imports", True, 1),                 # use crate::util::unit
        (f"{lib}::Point", f"{shapes}::Shape", "implements", True, 1),
        (f"{lib}::Point.area", f"{shapes}::area", "calls", True, 1),
        (f"{lib}::Point.area", f"{util}::unit", "calls", True, 1),
        (f"{inner}::f", f"{util}::unit", "calls", True, 1),
    }


JAVA_WORKSPACE = {
    'java/src/main/java/com/acme/shop/Order.java': (
        'package com.acme.shop;\n'
        '\n'
        'import com.acme.util.Helper;\n'
        'import com.acme.model.*;\n'
        '\n'
        'public class Order extends Entity {\n'
        '    public void add() {\n'
        '        Helper.log(1);\n'
        '        new Line().price();\n'
        '        recalc();\n'
        '    }\n'
        '    private void recalc() { Util.go(); }\n'
        '}\n'
    ),
    'java/src/main/java/com/acme/shop/Util.java': (
        'package com.acme.shop;\n'
        '\n'
        'class Util { static void go() {} }\n'
    ),
    'java/src/main/java/com/acme/util/Helper.java': (
        'package com.acme.util;\n'
        '\n'
        'public class Helper { public static void log(int x) {} }\n'
    ),
    'java/src/main/java/com/acme/model/Entity.java': (
        'package com.acme.model;\n'
        '\n'
        'public class Entity {}\n'
    ),
    'java/src/main/java/com/acme/model/Line.java': (
        'package com.acme.model;\n'
        '\n'
        'public class Line { public int price() { return 1; } }\n'
    ),
}


def test_java_imports_by_package_path():
    root = "java/src/main/java/com/acme/"
    order, util, helper = root + "shop/Order.java", root + "shop/Util.java", \
        root + "util/Helper.java"
    entity, line = root + "model/Entity.java", root + "model/Line.java"
    assert _edges(JAVA_WORKSPACE) == {
        (order, helper, "imports", True, 1),
        (order, entity, "imports", True, 1),               # import com.acme.model.*
        (order, line, "imports", True, 1),
        (f"{order}::Order", f"{entity}::Entity", "inherits", True, 1),
        (f"{order}::Order.add", f"{helper}::Helper.log", "calls", True, 1),
        (f"{order}::Order.add", f"{line}::Line", "calls", True, 1),
        (f"{order}::Order.add", f"{line}::Line.price", "calls", False, 1),
        (f"{order}::Order.add", f"{order}::Order.recalc", "calls", True, 1),
        (f"{order}::Order.recalc", f"{util}::Util.go", "calls", True, 1),  # same package
    }


CSHARP_WORKSPACE = {
    'cs/Shop/Order.cs': (
        'using Acme.Util;\n'
        'namespace Acme.Shop {\n'
        '  public class Order : Entity {\n'
        '    public void Add() { Helper.Log(1); Recalc(); }\n'
        '    void Recalc() {}\n'
        '  }\n'
        '}\n'
    ),
    'cs/Shop/Entity.cs': (
        'namespace Acme.Shop;\n'
        'public class Entity {}\n'
    ),
    'cs/Util/Helper.cs': (
        'namespace Acme.Util {\n'
        '  public static class Helper { public static void Log(int x) {} }\n'
        '}\n'
    ),
}


def test_csharp_using_resolves_by_namespace():
    order, entity, helper = "cs/Shop/Order.cs", "cs/Shop/Entity.cs", "cs/Util/Helper.cs"
    assert _edges(CSHARP_WORKSPACE) == {
        (order, helper, "imports", True, 1),
        (f"{order}::Acme.Shop.Order", f"{entity}::Acme.Shop.Entity", "inherits", True, 1),
        (f"{order}::Acme.Shop.Order.Add", f"{helper}::Acme.Util.Helper.Log", "calls", True, 1),
        (f"{order}::Acme.Shop.Order.Add", f"{order}::Acme.Shop.Order.Recalc", "calls", True, 1),
    }


C_WORKSPACE = {
    'c/include/list.h': (
        'struct node { int v; };\n'
        'int link(int a);\n'
    ),
    'c/src/list.c': (
        '#include "../include/list.h"\n'
        '#include <stdio.h>\n'
        'int link(int a) { return a; }\n'
        'int push(int a) { return link(a); }\n'
    ),
    'c/src/main.c': (
        '#include "include/list.h"\n'
        'int main(void) { return push(1); }\n'
    ),
}


def test_c_quoted_includes_relative_then_by_suffix():
    header, lst, main = "c/include/list.h", "c/src/list.c", "c/src/main.c"
    assert _edges(C_WORKSPACE) == {
        (lst, header, "imports", True, 1),
        (main, header, "imports", True, 1),
        (f"{lst}::push", f"{lst}::link", "calls", True, 1),
        (f"{main}::main", f"{lst}::push", "calls", False, 1),
    }


RUBY_PHP_WORKSPACE = {**{
    'rb/lib/shop/order.rb': (
        "require_relative 'base'\n"
        "require 'shop/util'\n"
        'module Shop\n'
        '  class Order < Base\n'
        '    def add\n'
        '      Util.log\n'
        '    end\n'
        '  end\n'
        'end\n'
    ),
    'rb/lib/shop/base.rb': (
        'module Shop\n'
        '  class Base\n'
        '  end\n'
        'end\n'
    ),
    'rb/lib/shop/util.rb': (
        'module Shop\n'
        '  module Util\n'
        '    def self.log; end\n'
        '  end\n'
        'end\n'
    ),
}, **{
    'php/app/Models/Order.php': (
        '<?php\n'
        'namespace App\\Models;\n'
        '\n'
        'use App\\Util\\Helper;\n'
        "require_once __DIR__ . '/../bootstrap.php';\n"
        '\n'
        'class Order extends Model {\n'
        '    public function add() { Helper::log(1); $this->recalc(); }\n'
        '    private function recalc() {}\n'
        '}\n'
    ),
    'php/app/Models/Model.php': (
        '<?php\n'
        'namespace App\\Models;\n'
        '\n'
        'class Model {}\n'
    ),
    'php/app/Util/Helper.php': (
        '<?php\n'
        'namespace App\\Util;\n'
        '\n'
        'class Helper { public static function log($x) {} }\n'
    ),
    'php/app/bootstrap.php': (
        '<?php\n'
        'function boot() {}\n'
    ),
}}


def test_ruby_requires_and_php_uses():
    order_rb, base_rb, util_rb = "rb/lib/shop/order.rb", "rb/lib/shop/base.rb", \
        "rb/lib/shop/util.rb"
    order, model, helper, boot = ("php/app/Models/Order.php", "php/app/Models/Model.php",
                                  "php/app/Util/Helper.php", "php/app/bootstrap.php")
    assert _edges(RUBY_PHP_WORKSPACE) == {
        (order_rb, base_rb, "imports", True, 1),           # require_relative
        (order_rb, util_rb, "imports", True, 1),           # require 'shop/util' via lib/
        (f"{order_rb}::Shop.Order", f"{base_rb}::Shop.Base", "inherits", True, 1),
        (f"{order_rb}::Shop.Order.add", f"{util_rb}::Shop.Util.log", "calls", True, 1),
        (order, helper, "imports", True, 1),
        (order, boot, "imports", True, 1),
        (f"{order}::App.Models.Order", f"{model}::App.Models.Model", "inherits", True, 1),
        (f"{order}::App.Models.Order.add", f"{helper}::App.Util.Helper.log", "calls", True, 1),
        (f"{order}::App.Models.Order.add", f"{order}::App.Models.Order.recalc", "calls",
         True, 1),
    }


def test_super_calls_resolve_to_the_base_class_method():
    files = {
        "a.py": ("class Base:\n    def save(self):\n        pass\n\n"
                 "class Order(Base):\n    def save(self):\n        super().save()\n"),
        "b.ts": "class B { run() {} }\nclass C extends B { run() { super.run(); } }\n",
    }
    assert _edges(files, "calls") == {
        ("a.py::Order.save", "a.py::Base.save", "calls", True, 1),
        ("b.ts::C.run", "b.ts::B.run", "calls", True, 1),
    }


def test_bare_names_skip_class_members_where_the_language_requires_self():
    py = {
        "api.py": "def request():\n    pass\n",
        "s.py": ("from api import request\n\nclass Session:\n    def request(self):\n"
                 "        pass\n\n    def get(self):\n        return request()\n"),
    }
    assert _edges(py, "calls") == {("s.py::Session.get", "api.py::request", "calls", True, 1)}
    java = {"S.java": "class S {\n  void request() {}\n  void get() { request(); }\n}\n"}
    assert _edges(java, "calls") == {("S.java::S.get", "S.java::S.request", "calls", True, 1)}


def test_python_namespace_package_by_path_suffix():
    files = {
        "proj/core/utils.py": "def tidy():\n    pass\n",
        "proj/app/main.py": ("from proj.core import utils\nfrom proj.core.utils import tidy\n"
                             "import os.path\n\ndef run():\n    utils.tidy()\n    tidy()\n"),
    }
    assert _edges(files) == {
        ("proj/app/main.py", "proj/core/utils.py", "imports", True, 2),
        ("proj/app/main.py::run", "proj/core/utils.py::tidy", "calls", True, 2),
    }


def test_js_source_root_alias():
    files = {
        "web/src/lib/api.ts": "export function get() {}\n",
        "web/src/pages/home.tsx": "import { get } from '@/lib/api';\nexport function Home() { get(); }\n",
    }
    assert _edges(files) == {
        ("web/src/pages/home.tsx", "web/src/lib/api.ts", "imports", True, 1),
        ("web/src/pages/home.tsx::Home", "web/src/lib/api.ts::get", "calls", True, 1),
    }


def test_names_re_exported_through_star_imports():
    files = {
        "db/models/__init__.py": "from db.models.fields import *\n",
        "db/models/fields/__init__.py": "from .char import *\n",
        "db/models/fields/char.py": "class CharField:\n    def clean(self):\n        pass\n",
        "app/forms.py": ("from db import models\nfrom db.models import CharField\n\n"
                         "def make():\n    CharField()\n    models.CharField.clean(None)\n"),
        "cyc/a.py": "from cyc.b import *\n",
        "cyc/b.py": "from cyc.a import *\n",
        "cyc/use.py": "from cyc.a import nothing_here\n\ndef f():\n    nothing_here()\n",
    }
    calls = _edges(files, "calls")
    assert calls == {
        ("app/forms.py::make", "db/models/fields/char.py::CharField", "calls", True, 1),
        ("app/forms.py::make", "db/models/fields/char.py::CharField.clean", "calls", True, 1),
    }
