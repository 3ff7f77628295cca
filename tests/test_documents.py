"""One function per document: the table of m1nd/documents/ names what exists, the
server's routes call those functions, and m1nd/serve/ keeps no answer of its own."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from m1nd.documents import TABLE

SERVE = Path(__file__).resolve().parents[1] / "m1nd" / "serve"


def test_every_function_the_table_names_exists():
    for entry in TABLE:
        module, name = entry.function.split(":")
        assert callable(getattr(importlib.import_module(module), name)), entry


def test_every_route_the_table_names_is_served():
    routes = (SERVE / "app.py").read_text(encoding="utf-8")
    for entry in TABLE:
        if entry.route:
            assert f'"{entry.route}"' in routes, entry


def test_serve_calls_the_documents_functions_for_doctor_cases_and_reports():
    source = (SERVE / "source.py").read_text(encoding="utf-8")
    for name in ("doctor_report", "cases_document", "cases_overlay", "report_list", "delivered",
                 "delivered_html"):
        assert f"import {name}" in source, name
    assert "load_profiles" not in source and "overlay_of" not in source  # no glue of its own


def test_serve_holds_no_answer_cache():
    for path in SERVE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = {a.name for a in node.names}
                assert not names & {"lru_cache", "cache", "cached_property"}, path
            if isinstance(node, ast.Attribute) and node.attr in ("st_mtime", "st_mtime_ns", "getmtime"):
                raise AssertionError(f"{path.name}: a file fingerprint ({node.attr})")
