"""The documentation: the site builds with warnings as errors, every code block of the README and
the docs runs, the public API has docstrings, and the "How it works" pages name every module.

Code blocks: every ```python and ```bash block of README.md and docs/**/*.md runs, one page at a
time, as a reader would type them in order: the python blocks of a page in one interpreter (one
namespace), the bash blocks of a page in one shell (`set -e`), each page in a fresh temporary
folder that holds the checkout's examples/ and notebooks/ (as a reader in a checkout has them), with `jitcoop`
and `python3` meaning this checkout's. A block that cannot run in a test
carries a visible marker on the line before it, `<!-- docs-test: skip (REASON) -->`, and
SKIPPED below counts them per file, so a skip is a decision and not an accident. Output and
illustrations are ```text blocks, which are not run.
"""
from __future__ import annotations

import ast
import concurrent.futures
import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md"] + sorted(p for p in DOCS.rglob("*.md") if "notebooks" not in p.parts)

# Blocks marked `docs-test: skip`, per file: each needs something a test machine lacks (a Vulkan
# application, a package install, minutes of benchmarking).
SKIPPED = {
    "README.md": 3,                      # the install commands, a Vulkan application, a benchmark run
    "docs/index.md": 1,                  # installs the docs extra and serves the site
    "docs/getting-started.md": 2,        # the two install commands
    "docs/guide/vulkan-driver.md": 2,    # a Vulkan application; an application's test suite
    "docs/guide/ggml-suite.md": 1,       # ggml's test-backend-ops (get-ggml; hours for the whole suite)
    "docs/guide/diagnostics.md": 1,      # a Vulkan application under the validation layer
    "docs/guide/faults.md": 1,           # a Vulkan application with injected faults
    "docs/guide/errors.md": 1,           # a fuzzing campaign
    "docs/guide/cache.md": 2,            # the user's own cache; build-library on a folder of the user's shaders
    "docs/guide/pictures.md": 1,         # a profile comparison of two decode shaders
    "docs/performance.md": 2,            # benchmark runs
    "docs/development.md": 5,            # the whole suite, benchmarks, campaigns, the docs server
}

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_SKIP = re.compile(r"<!-- docs-test: skip \(([^)]+)\) -->\s*$")
_SKIP_ANY = re.compile(r"<!-- docs-test:")


def blocks(path: Path) -> list[tuple[str, str, int, str | None]]:
    """(language, code, line, skip reason or None) of every fenced block of a page."""
    text = path.read_text()
    out = []
    for m in _FENCE.finditer(text):
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        if _SKIP_ANY.search(before) and not skip:
            raise AssertionError(f"{path}:{text.count(chr(10), 0, m.start()) + 1}: a docs-test marker "
                                 f"must read `<!-- docs-test: skip (REASON) -->`")
        out.append((m.group(1), m.group(2), text.count("\n", 0, m.start()) + 2, skip and skip.group(1)))
    return out


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _environment(tmp: Path) -> dict:
    """`jitcoop` and `python3` of this checkout first on PATH; the test suite's kernel cache."""
    bin_dir = tmp / ".bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    (bin_dir / "jitcoop").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m jitcoop "$@"\n')
    (bin_dir / "jitcoop").chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("JITCOOP_CACHE_DIR", str(ROOT / ".pytest_cache" / "jitcoop"))
    env["MPLBACKEND"] = "Agg"
    env["JITCOOP_PROGRESS"] = "0"
    return env


_RUNNER = textwrap.dedent("""
    import sys, traceback
    ns = {"__name__": "__main__"}
    for line, code in BLOCKS:
        try:
            exec(compile(code, f"{PAGE}:{line}", "exec"), ns)
        except BaseException:
            traceback.print_exc()
            print(f"the python block at {PAGE}:{line} failed", file=sys.stderr)
            sys.exit(1)
""")


def test_skip_markers_are_counted():
    counted = {}
    for page in PAGES:
        n = sum(1 for lang, _, _, skip in blocks(page) if skip is not None and lang in ("python", "bash"))
        if n:
            counted[_rel(page)] = n
    assert counted == SKIPPED, ("docs-test skip markers per file differ from SKIPPED in tests/test_docs.py: "
                                "run the block in the test, or add it there with its reason")


def test_blocks_are_python_bash_or_text():
    """A block in another language would silently not run: say what it is (text for output)."""
    for page in PAGES:
        for lang, _, line, _ in blocks(page):
            assert lang in ("python", "bash", "text", "c", "cpp", "glsl", "toml", "yaml", "json"), \
                f"{_rel(page)}:{line}: a ```{lang or '(no language)'} block"


RUNNABLE = [p for p in PAGES if any(lang in ("python", "bash") and skip is None for lang, _, _, skip in blocks(p))]


def _run_page(page: Path, tmp: Path) -> str | None:
    """Run a page's blocks in a fresh folder: None, or what failed with its output."""
    env = _environment(tmp)
    work = tmp / "work"
    work.mkdir()
    for folder in ("examples", "notebooks", "tests"):
        (work / folder).symlink_to(ROOT / folder)
    found = [(lang, code, line) for lang, code, line, skip in blocks(page) if skip is None]
    python = [(line, code) for lang, code, line in found if lang == "python"]
    bash = [(line, code) for lang, code, line in found if lang == "bash"]
    if python:
        script = f"BLOCKS = {python!r}\nPAGE = {_rel(page)!r}\n" + _RUNNER
        r = subprocess.run([sys.executable, "-c", script], cwd=work, env=env, capture_output=True, text=True,
                           timeout=300)
        if r.returncode:
            return r.stdout[-3000:] + r.stderr[-5000:]
    if bash:
        script = "set -euo pipefail\n" + "\n".join(f"# {_rel(page)}:{line}\n{code}" for line, code in bash)
        r = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        if r.returncode:
            return f"bash blocks of {_rel(page)}:\n" + r.stdout[-3000:] + r.stderr[-5000:]
    return None


@pytest.fixture(scope="module")
def page_runs(request, tmp_path_factory):
    """The selected pages, run side by side (one per core): each is a few processes that mostly
    wait on imports and compiles, and a page's test then reads its outcome."""
    selected = [item.callspec.params["page"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_code_blocks_run"]
    with concurrent.futures.ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        futures = {page: pool.submit(_run_page, page, tmp_path_factory.mktemp("page")) for page in selected}
        return {page: f.result() for page, f in futures.items()}


@pytest.mark.parametrize("page", RUNNABLE, ids=_rel)
def test_code_blocks_run(page, page_runs):
    failure = page_runs[page]
    assert failure is None, failure


def test_readme_starts_with_the_two_commands():
    """The README's first block: install and run the example; install and pass the tests (as CI does)."""
    lang, code, _, _ = blocks(ROOT / "README.md")[0]
    lines = [ln.split("#")[0].strip() for ln in code.strip().splitlines()]
    assert lines == ['pip install -e . && jitcoop example',
                     'pip install -e ".[test]" && python3 -m pytest -q -n auto --dist loadfile']
    assert lines[1].split("&& ")[1] in (ROOT / ".ci" / "run").read_text()


def test_readme_links_resolve():
    """The README is read on a repository host, outside the site: its relative links must name
    files of the checkout (anchors into the docs are checked by the site build)."""
    text = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def test_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_no_development_narrative():
    """The project speaks of results and reasons: no numbered work sessions in any tracked file."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    pattern = re.compile(r"\bstops? [0-9]{1,3}\b|\bthis (stop|session)\b", re.I)
    bad = []
    for name in files:
        p = ROOT / name
        if p.suffix not in (".md", ".py", ".comp", ".toml", ".yml", ".txt", ".sh", ".c", ".cpp", ".h") or not p.is_file():
            continue
        if p.is_symlink() or "include" in p.parts:
            continue
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if pattern.search(line) and p != Path(__file__):
                bad.append(f"{name}:{n}: {line.strip()[:100]}")
    assert not bad, "\n".join(bad)


def _public():
    """Every public object of the API the reference documents: jitcoop's exports, the kernel
    options, the testing helpers, the pictures and the progress bar."""
    import jitcoop
    import jitcoop.options
    import jitcoop.progress
    import jitcoop.testing
    out = [(f"jitcoop.{name}", getattr(jitcoop, name)) for name in jitcoop.__all__ + ["convert_coopvec_matrix"]]
    out.append(("jitcoop.options.KernelOptions", jitcoop.options.KernelOptions))
    for mod, names in ((jitcoop.testing, ["ulp", "ulp_error", "assert_ulp_close", "assert_close"]),
                       (jitcoop.progress, ["Progress", "set_enabled"])):
        out += [(f"{mod.__name__}.{n}", getattr(mod, n)) for n in names]
    plot = importlib.import_module("jitcoop.plot")
    out += [(f"jitcoop.plot.{n}", getattr(plot, n)) for n in plot.__all__]
    return out


def test_public_api_has_docstrings():
    missing = []
    for name, obj in _public():
        if not inspect.getdoc(obj):
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                fn = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if callable(fn) or isinstance(member, property):
                    if not inspect.getdoc(fn):
                        missing.append(f"{name}.{attr}")
    assert not missing, "public API without a docstring: " + ", ".join(missing)


def test_how_it_works_names_every_module():
    """The pass lists are drawn from the code by docs/hooks/modules.py; the pages must ask for
    every package whose modules are stages, and each module must say what it holds."""
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import modules as hook
    finally:
        sys.path.pop(0)
    pages = {p: p.read_text() for p in (DOCS / "how-it-works").glob("*.md")}
    text = "\n".join(pages.values())
    for package in ("jitcoop.spirv", "jitcoop.analysis", "jitcoop.codegen", "jitcoop.codegen.rules",
                    "jitcoop.runtime", "jitcoop.icd"):
        assert f"<!-- modules: {package} -->" in text, package
        listed = hook.modules(package)       # raises for a module without a docstring
        on_disk = {p.stem for p in hook.package_dir(package).glob("*.py")} - {"__init__"}
        assert {name for name, _ in listed} == on_disk
    # The analysis order is the package docstring; it must name every analysis module.
    order = ast.get_docstring(ast.parse((ROOT / "jitcoop" / "analysis" / "__init__.py").read_text()))
    for name in {p.stem for p in (ROOT / "jitcoop" / "analysis").glob("*.py")} - {"__init__", "context"}:
        assert re.search(rf"^\s*{name}\b", order, re.M), f"jitcoop/analysis/__init__.py does not place {name}"


def test_site_builds_strict(tmp_path):
    """mkdocs build --strict: broken links and anchors, nav entries, mkdocstrings' references and
    griffe's docstring warnings all fail it."""
    for name in ("mkdocs", "material", "mkdocstrings", "mkdocs_jupyter"):
        assert importlib.util.find_spec(name), f"{name} is missing: pip install -e \".[test]\" installs it"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["NO_MKDOCS_2_WARNING"] = "1"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-6000:]
    assert (tmp_path / "site" / "reference" / "api" / "index.html").exists()
    assert (tmp_path / "site" / "notebooks" / "quickstart" / "index.html").exists()


def test_api_reference_documents_every_export():
    """reference/api.md renders every name jitcoop exports (mkdocstrings then fails the build on
    a name it cannot resolve)."""
    import jitcoop
    text = (DOCS / "reference" / "api.md").read_text()
    for name in jitcoop.__all__ + ["convert_coopvec_matrix"]:
        assert f"::: jitcoop.{name}\n" in text, name


def test_docs_pages_named_in_the_code_exist():
    """Code and tests point readers at docs pages (`docs/guide/numerics.md`); those pages exist."""
    files = subprocess.run(["git", "ls-files", "*.py", "*.c", "*.cpp", "*.h", "*.comp", "*.toml", "*.yml"],
                           cwd=ROOT, capture_output=True, text=True).stdout.split()
    bad = []
    for name in files:
        if "include" in Path(name).parts:
            continue
        for target in re.findall(r"\bdocs/[\w./-]+\.md\b", (ROOT / name).read_text(errors="replace")):
            if not (ROOT / target).exists():
                bad.append(f"{name}: {target}")
    assert not bad, "\n".join(bad)
