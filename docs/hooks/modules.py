"""MkDocs hook: module lists drawn from the code, so the "How it works" pages cannot drift.

A line `<!-- modules: jitcoop.analysis -->` in a page becomes a table of every module of that
package (its file name and the first paragraph of its docstring); `<!-- docstring: jitcoop.analysis
-->` becomes the package docstring itself, as a code block (the analysis order lives there). A module
without a docstring is an error, which fails the build.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_MARK = re.compile(r"^<!-- (modules|docstring): ([\w.]+) -->$", re.M)


class DocsError(Exception):
    pass


def _docstring(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    if not doc:
        raise DocsError(f"{path.relative_to(ROOT)} has no module docstring")
    return doc


def package_dir(package: str) -> Path:
    return ROOT.joinpath(*package.split("."))


def modules(package: str) -> list[tuple[str, str]]:
    """(module name, first paragraph of its docstring) for every module of a package but __init__."""
    out = []
    for p in sorted(package_dir(package).glob("*.py")):
        if p.name == "__init__.py":
            continue
        first = _docstring(p).split("\n\n")[0]
        out.append((p.stem, " ".join(first.split())))
    return out


def _table(package: str) -> str:
    rows = ["| module | what it holds |", "| --- | --- |"]
    for name, doc in modules(package):
        rows.append(f"| `{package}.{name}` | {doc.replace('|', '&#124;')} |")
    return "\n".join(rows)


def _replace(m: re.Match) -> str:
    kind, package = m.groups()
    if kind == "modules":
        return _table(package)
    return "```text\n" + _docstring(package_dir(package) / "__init__.py") + "\n```"


def on_page_markdown(markdown: str, **kwargs) -> str:
    return _MARK.sub(_replace, markdown)
