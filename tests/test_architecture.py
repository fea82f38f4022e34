"""The import contract and the structure rules of ARCHITECTURE.md, checked on every run.

- layers: imports point down only (import-linter, contract in pyproject.toml);
- no import cycles, counting imports inside functions and under TYPE_CHECKING;
- an import inside a function says why on its line or the line above (a measured
  start-up cost is the only reason to defer one);
- no module over MAX_MODULE_LINES unless its docstring says why it is one piece.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "neuralmind"
MAX_MODULE_LINES = 500
ONE_PIECE = "reads top to bottom"      # the phrase a longer module's docstring carries


def test_layers_contract_is_kept() -> None:
    # In a child process: import-linter loads `rich`, which the MCP tests require unloaded.
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"an import points up or sideways:\n{run.stdout}{run.stderr}"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        out.append(sorted(group))
    return out


def test_no_import_cycles() -> None:
    graph = grimp.build_graph("neuralmind", exclude_type_checking_imports=False, cache_dir=None)
    assert _cycles(graph) == []


def _reason(lines: list[str], lineno: int) -> str:
    """The comment on an import's line, else the one just above its group of imports."""
    same = lines[lineno - 1].partition("#")[2].strip()
    if same:
        return same
    i = lineno - 2
    while i >= 0 and (not lines[i].strip() or lines[i].lstrip().startswith(("import ", "from "))):
        i -= 1
    above = lines[i].strip() if i >= 0 else ""
    return above[1:].strip() if above.startswith("#") else ""


def _function_level_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, statement, comment it carries) of each import inside a function."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child.lineno, ast.unparse(child), _reason(lines, child.lineno)))
            visit(child, inside)

    visit(ast.parse(source), False)
    return found


def test_function_level_imports_say_why() -> None:
    silent = [f"{p.relative_to(ROOT)}:{line}: {stmt}"
              for p in sorted(PACKAGE.rglob("*.py"))
              for line, stmt, why in _function_level_imports(p) if not why]
    assert silent == [], "an import inside a function needs its reason in a comment"


def test_modules_stay_small_or_say_why() -> None:
    long = []
    for p in sorted(PACKAGE.rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        if text.count("\n") > MAX_MODULE_LINES and ONE_PIECE not in (ast.get_docstring(
                ast.parse(text)) or ""):
            long.append(f"{p.relative_to(ROOT)}: {text.count(chr(10))} lines")
    assert long == []
