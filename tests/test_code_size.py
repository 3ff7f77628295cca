"""Rooms one person can hold in mind: no function over 60 lines, and no module over
300 lines unless its docstring says why it stays one module ("Long because …")."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "m1nd"
FUNCTION_LINES = 60
MODULE_LINES = 300
REASON = "Long because"


def long_functions(package: Path) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def unexplained_long_modules(package: Path) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if text.count("\n") > MODULE_LINES and REASON not in doc:
            found.append(f"{path.relative_to(package.parent)} ({text.count(chr(10))} lines)")
    return found


def test_no_function_is_longer_than_sixty_lines():
    assert long_functions(PACKAGE) == []


def test_a_module_over_three_hundred_lines_says_why_at_its_top():
    assert unexplained_long_modules(PACKAGE) == []


def test_the_rules_catch_a_long_function_and_an_unexplained_long_module(tmp_path):
    fake = tmp_path / "m1nd"
    fake.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    (fake / "short.py").write_text('"""A module."""\n\n\ndef f():\n    return 1\n')
    (fake / "long_function.py").write_text(f'"""A module."""\n\n\ndef f():\n{body}\n')
    (fake / "long_module.py").write_text('"""A module."""\n' + "x = 1\n" * MODULE_LINES)
    (fake / "explained.py").write_text(f'"""A table.  {REASON} it is data."""\n' + "x = 1\n" * MODULE_LINES)
    assert [f.split(":")[0] for f in long_functions(fake)] == ["m1nd/long_function.py"]
    assert [m.split(" ")[0] for m in unexplained_long_modules(fake)] == ["m1nd/long_module.py"]
