"""No function in tutor/ or tutor/model/ is over 60 lines or 15 branches without saying why.

A long function is split into named steps; where one reads better whole (a table of cases, a loop
whose state is the point), its docstring says so on a line starting "Long because:". Read from the
source with ast, nothing imported.
"""

from __future__ import annotations

import ast

from conftest import ROOT

from tests.source import code_files

MAX_LINES = 60
MAX_BRANCHES = 15
REASON = "Long because:"
BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp, ast.Match)


def _oversized(source: str, where: str) -> list[str]:
    """`where:line name (N lines, M branches)` for each function of `source` over a limit and not
    excused by its docstring; a nested function's lines and branches count in the one around it too."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        lines = node.end_lineno - node.lineno + 1
        branches = sum(isinstance(n, BRANCHES) for n in ast.walk(node))
        doc = ast.get_docstring(node) or ""
        excused = any(line.strip().startswith(REASON) for line in doc.splitlines())
        if (lines > MAX_LINES or branches > MAX_BRANCHES) and not excused:
            found.append(f"{where}:{node.lineno} {node.name} ({lines} lines, {branches} branches)")
    return found


def test_no_function_is_over_the_limits_without_a_reason():
    offenders = [
        found
        for file in code_files()
        for found in _oversized(file.read_text(encoding="utf-8"), str(file.relative_to(ROOT)))
    ]
    assert offenders == [], (
        f"over {MAX_LINES} lines or {MAX_BRANCHES} branches; split into named steps, or say why on a "
        f"docstring line starting {REASON!r}:\n" + "\n".join(offenders)
    )


def _function(body_lines: int, doc: str = "") -> str:
    docstring = f'    """{doc}"""\n' if doc else ""
    return (
        "def f(x):\n"
        + docstring
        + "".join(f"    if x == {i}:\n        x += 1\n" for i in range(body_lines // 2))
    )


def test_the_limits_and_the_reason_are_read_as_written():
    assert _oversized(_function(30), "a.py") == []  # 31 lines, 15 branches
    assert _oversized(_function(32), "a.py") == ["a.py:1 f (33 lines, 16 branches)"]
    assert _oversized(_function(32, "One case a line.\n\n    Long because: a table of cases."), "a.py") == []
    assert _oversized(_function(32, "Long, because it is."), "a.py") != []  # the form is fixed
    nested = "def outer():\n    " + _function(32).replace("\n", "\n    ")
    assert [f.split(" (")[0] for f in _oversized(nested, "a.py")] == ["a.py:1 outer", "a.py:2 f"]
    assert _oversized("def g():\n" + "    x = 1\n" * 59, "b.py") == []  # 60 lines
    assert _oversized("def g():\n" + "    x = 1\n" * 60, "b.py") == ["b.py:1 g (61 lines, 0 branches)"]
