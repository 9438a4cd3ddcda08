"""ggml's own GPU test suite (test-backend-ops: every ggml operation on a Vulkan device, checked
against ggml's CPU backend) on a Vulkan driver, on one of ggml's three matrix paths.

    python tools/ggml_suite.py run PATH [-o OPS] [-p REGEX] [--driver jitcoop|lavapipe|system]
                                        [--cache DIR] [--json OUT] [--each-op]
    python tools/ggml_suite.py compare REFERENCE.json RESULT.json
    python tools/ggml_suite.py table RESULT.json...      # per operation, as a Markdown table (a time result too)
    python tools/ggml_suite.py results REFERENCE.json RESULT.json...  # the H100's beside each path's, per operation
    python tools/ggml_suite.py merge OUT.json SHARD.json...   # shards of one path, as one result
    python tools/ggml_suite.py add RESULT.json WHERE SHARD.json...  # more cases into a result ('' WHERE: here)
    python tools/ggml_suite.py time OUT.json [-o OPS] [--timeout S]   # cold and warm beside lavapipe
    python tools/ggml_suite.py time-add OUT.json WHERE REFERENCE.json SHARD.json...  # sharded timings

PATH is ggml's matrix path: `coopmat2` (VK_NV_cooperative_matrix2, ggml's default on NVIDIA),
`coopmat1` (KHR cooperative matrices only) or `scalar` (neither). On jitcoop's driver the path is
chosen by what the device offers (JITCOOP_ICD_HIDE takes the extensions off the nvidia profile);
on another driver by ggml's own switches (GGML_VK_DISABLE_COOPMAT2, GGML_VK_DISABLE_COOPMAT), as on
the H100. ggml comes from ../shared/tools/get-ggml (GGML_DIR, default ~/.cache/ggml-sid); lavapipe
from ../shared/tools/get-lavapipe (JITCOOP_LAVAPIPE, default ~/.cache/lavapipe26).

A result (`run --json`) is {"path", "driver", "seconds", "returncode", "cases": {case: status}}
with status "OK", "FAIL" or "not supported"; a run that ends early (an abort) has fewer cases
and a non-zero return code. With `--each-op` every operation runs in a test-backend-ops of its
own (the operations that have cases, path-dependent ones first, flash attention last), the
result adds {"ops": {op: {"seconds", "returncode", "cases"}}} and is written after each
operation; a second run with the same --json goes on where the first stopped. `compare` says
which cases pass in the reference and not in the result, and which are "not supported" in one
and not the other.
"""
from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ("coopmat2", "coopmat1", "scalar")
_HIDE = {"coopmat2": "", "coopmat1": "VK_NV_cooperative_matrix2",
         "scalar": "VK_NV_cooperative_matrix2,VK_KHR_cooperative_matrix"}
_GGML_SWITCHES = {"coopmat2": {}, "coopmat1": {"GGML_VK_DISABLE_COOPMAT2": "1"},
                  "scalar": {"GGML_VK_DISABLE_COOPMAT2": "1", "GGML_VK_DISABLE_COOPMAT": "1"}}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# a case's line: "  OP(params): " then, for a failure, what test-backend-ops found ("[OP] NMSE =
# ... > ... ", "[OP] inf mismatch: ..."), then its status ("not supported [BACKEND]")
# a case and its status; where two cases' lines ran together (output of a run cut short, or of
# threads), the status is the last case's, and the case before it has none
_CASE = re.compile(r"^  (?:.*\s)?([A-Z_0-9]+\([^()]*\)): (?:.* )?(OK|FAIL|not supported)(?: \[[^\]]*\])?\s*$")


def ggml_dir() -> Path | None:
    d = Path(os.environ.get("GGML_DIR", Path.home() / ".cache" / "ggml-sid"))
    return d if (d / "run").exists() and (d / "bin" / "test-backend-ops").exists() else None


def lavapipe_dir() -> Path | None:
    d = Path(os.environ.get("JITCOOP_LAVAPIPE", Path.home() / ".cache" / "lavapipe26"))
    return d if (d / "lvp_icd.json").exists() else None


@functools.cache
def _bytecode(package: Path):
    """Compile the bytecode of jitcoop's modules where it is missing or stale, as pip does when it
    installs the package. A checkout used where PYTHONDONTWRITEBYTECODE is set has none, and
    every driver process would compile jitcoop's sources again: 0.3 s of a program's cold start
    (the code generator's modules), 0.07 s of a warm one, which a user's install does not pay."""
    import compileall
    compileall.compile_dir(str(package), quiet=2, workers=1)


def environment(path: str, driver: str = "jitcoop", cache: Path | None = None) -> dict:
    """The environment of a test-backend-ops run on `driver` taking ggml's `path`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GGML_VK_", "JITCOOP_ICD_", "VK_ICD"))}
    if driver == "jitcoop":
        if str(ROOT) not in sys.path:      # a checkout's tool: its own jitcoop, installed or not
            sys.path.insert(0, str(ROOT))
        import jitcoop
        from jitcoop import icd
        _bytecode(Path(jitcoop.__file__).parent)
        env.update(VK_DRIVER_FILES=str(icd.manifest_path()), JITCOOP_ICD_PROFILES="nvidia")
        if _HIDE[path]:
            env["JITCOOP_ICD_HIDE"] = _HIDE[path]
        if cache is not None:
            env["JITCOOP_CACHE_DIR"] = str(cache)
    else:
        env.update(_GGML_SWITCHES[path])
        if driver == "lavapipe":
            lvp = lavapipe_dir()
            if lvp is None:
                raise RuntimeError("lavapipe is not installed (../shared/tools/get-lavapipe)")
            env.update(VK_DRIVER_FILES=str(lvp / "lvp_icd.json"), GGML_VK_VISIBLE_DEVICES="0")
            # llvmpipe's threads, one per core this process may use (as jitcoop's dispatches
            # take), not per core of the host, where a run is pinned to some of them
            env.setdefault("LP_NUM_THREADS", str(len(os.sched_getaffinity(0))))
            if cache is not None:
                env["MESA_SHADER_CACHE_DIR"] = str(cache)
    return env


def parse(output: str) -> dict:
    """{case: status} of test-backend-ops' console output (the Vulkan backend's lines)."""
    cases = {}
    for line in _ANSI.sub("", output).splitlines():
        m = _CASE.match(line)
        if m:
            cases[m.group(1)] = m.group(2)
    return cases


def run(path: str, ops: str = "", regex: str = "", driver: str = "jitcoop", cache: Path | None = None,
        timeout: float = 5400, jobs: int = 1) -> dict:
    g = ggml_dir()
    if g is None:
        raise RuntimeError("ggml is not installed (../shared/tools/get-ggml)")
    cmd, cwd = [str(g / "run"), "test-backend-ops", "-b", "Vulkan0"], None
    if driver == "lavapipe":
        # get-ggml's `run` starts test-backend-ops through its own C runtime's loader with its
        # libraries only; lavapipe's driver needs its own beside them (after them: ggml's newer
        # C++ runtime and Vulkan loader win)
        root, lvp = g / "root", lavapipe_dir() / "root"
        libs = ":".join(str(r / d) for r in (root, lvp) for d in ("usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"))
        cwd = root / "usr/lib/x86_64-linux-gnu/ggml/backends0"
        cmd = [str(root / "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"), "--library-path", libs,
               str((g / "bin" / "test-backend-ops").resolve()), "-b", "Vulkan0"]
    if ops:
        cmd += ["-o", ops]
    if regex:
        cmd += ["-p", regex]
    if jobs > 1:
        cmd += ["-j", str(jobs)]
    env = environment(path, driver, cache)
    t0, cpu0 = time.perf_counter(), _children_cpu()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=timeout, cwd=cwd)
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace"), -9
    seconds = time.perf_counter() - t0
    return {"path": path, "driver": driver, "ops": ops, "regex": regex, "seconds": round(seconds, 1),
            "cpu_seconds": round(_children_cpu() - cpu0, 1),
            "returncode": rc, "cases": parse(out), "tail": _ANSI.sub("", out)[-3000:]}


def _children_cpu() -> float:
    """User and system CPU seconds of this process's waited-for children and theirs (the compile
    children a driver waits for included): what a run cost, whatever else shared the machine."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


# the operations whose shaders differ between ggml's matrix paths, run first by --each-op;
# flash attention (a quarter of the suite's cases) runs last
_PATH_DEPENDENT = ("MUL_MAT", "MUL_MAT_ID", "CONV_2D", "OUT_PROD", "CONV_3D", "IM2COL_3D")
_LAST = ("FLASH_ATTN_EXT",)


def suite_ops() -> Counter:
    """{op: number of cases} of the whole suite (test-backend-ops' support listing on its CPU
    backend: the same cases on every backend, no Vulkan driver involved)."""
    g = ggml_dir()
    if g is None:
        raise RuntimeError("ggml is not installed (../shared/tools/get-ggml)")
    p = subprocess.run([str(g / "run"), "test-backend-ops", "support", "-b", "CPU"], capture_output=True,
                       text=True, timeout=600, env=environment("coopmat2", "system"))
    ops = Counter(m.group(1) for m in re.finditer(r"^  ([A-Z_0-9]+)\(", _ANSI.sub("", p.stdout), re.M))
    if not ops:
        raise RuntimeError(f"test-backend-ops support listed no cases: {p.stdout[-500:]}{p.stderr[-500:]}")
    return ops


def _pending(ops: list[str], done, timeout: float):
    """(operation, seconds left) for each of `ops` not in `done`, while `timeout` seconds from
    now last."""
    deadline = time.perf_counter() + timeout
    for op in ops:
        if op in done:
            continue
        left = deadline - time.perf_counter()
        if left < 5:
            return
        yield op, left


def run_each_op(path: str, out: Path, ops: list[str] | None = None, regex: str = "", driver: str = "jitcoop",
                cache: Path | None = None, timeout: float = 5400, jobs: int = 1, log=print) -> dict:
    """Every operation in its own test-backend-ops, the result written to `out` after each; an
    `out` from an earlier run with the same path and driver is continued (its operations are not
    run again). `timeout` bounds the whole call."""
    if ops is None:
        counts = suite_ops()
        first = [op for op in _PATH_DEPENDENT if op in counts]
        last = [op for op in _LAST if op in counts]
        ops = first + sorted((op for op in counts if op not in first + last), key=lambda op: (counts[op], op)) + last
    res = {"path": path, "driver": driver, "regex": regex, "seconds": 0.0, "returncode": 0, "cases": {}, "ops": {}}
    if out.exists():
        old = load(out)
        if (old.get("path"), old.get("driver"), old.get("regex", "")) == (path, driver, regex) and "ops" in old:
            res = old
            res["returncode"] = next((o["returncode"] for o in res["ops"].values() if o["returncode"]), 0)
    for op, left in _pending(ops, res["ops"], timeout):
        r = run(path, op, regex, driver, cache, left, jobs)
        res["cases"].update(r["cases"])
        res["ops"][op] = {"seconds": r["seconds"], "returncode": r["returncode"], "cases": len(r["cases"])}
        res["seconds"] = round(sum(o["seconds"] for o in res["ops"].values()), 1)
        if r["returncode"] != 0:
            res["returncode"] = r["returncode"]
            res.setdefault("tails", {})[op] = r["tail"]
        else:
            res.get("tails", {}).pop(op, None)      # (an earlier run's, cut short)
        save(out, res)
        c = Counter(r["cases"].values())
        log(f"{op:24s} {c['OK']:5d} passed {c['FAIL']:4d} failed {c['not supported']:5d} not supported "
            f"{r['seconds']:8.1f} s  exit {r['returncode']}")
    return res


# the drivers `time` compares, each on the matrix path ggml takes there (lavapipe offers KHR
# cooperative matrices only)
TIMED = (("jitcoop", "coopmat2"), ("lavapipe", "coopmat1"))
# the runs of an operation's `time` entry, in the order they run
RUNS = tuple(f"{driver}_{state}" for driver, _ in TIMED for state in ("cold", "warm"))


# jitcoop's runs again, on the cases lavapipe runs too (where it declines some that jitcoop runs)
COMMON = ("jitcoop_common_cold", "jitcoop_common_warm")


def time_op(op: str, regex: str, work: Path, timeout: float = 5400, progress=None) -> dict:
    """One operation's wall time through each driver of TIMED: from an empty shader cache (cold),
    then again on the cache that run left (warm), with the runs' counts of each status.

    Where lavapipe declines cases that jitcoop runs, the two did not run the same work: jitcoop
    runs cold and warm again without them (COMMON, with "excluded": how many), and "common" is
    the count of the cases both run (0: nothing to compare; no runs). `progress` is given the
    runs so far after each; `timeout` bounds them all."""
    out, deadline, cases = {}, time.perf_counter() + timeout, {}

    def timed(driver, path, cache, state, key, rx):
        if state == "cold":
            shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True, exist_ok=True)
        r = run(path, op, rx, driver, cache, max(1.0, deadline - time.perf_counter()))
        out[key] = {"seconds": r["seconds"], "cpu_seconds": r["cpu_seconds"], "returncode": r["returncode"],
                    "statuses": dict(Counter(r["cases"].values()))}
        cases[key] = r["cases"]
        if progress:
            progress(dict(out))
        return r["returncode"] != -9
    for driver, path in TIMED:
        for state in ("cold", "warm"):
            if not timed(driver, path, work / driver, state, f"{driver}_{state}", regex):
                return out
        shutil.rmtree(work / driver, ignore_errors=True)
    declined = sorted(c for c, st in cases["lavapipe_cold"].items()
                      if st == "not supported" and cases["jitcoop_cold"].get(c, "not supported") != "not supported")
    if declined:
        common = sum(st != "not supported" for st in cases["lavapipe_cold"].values())
        out["common"] = common
        if common:
            rx = excluding(declined, regex)
            for key, state in zip(COMMON, ("cold", "warm")):
                if not timed("jitcoop", "coopmat2", work / "common", state, key, rx):
                    return out
                out[key]["excluded"] = len(declined)
            shutil.rmtree(work / "common", ignore_errors=True)
    return out


def excluding(cases: list[str], regex: str = "") -> str:
    """A -p regex (test-backend-ops searches it, as ECMAScript, in each case's parameters) that
    matches the cases `regex` matches but `cases` (full names: OP(params))."""
    alts = "|".join(re.sub(r"([\\^$.|?*+()\[\]{}/])", r"\\\1", c[c.index("(") + 1:-1]) for c in cases)
    rest = "" if not regex else f"(?={regex[1:]})" if regex.startswith("^") else f"(?=[\\s\\S]*?(?:{regex}))"
    return f"^(?!(?:{alts})$)" + rest


def time_each_op(out: Path, ops: list[str] | None = None, regex: str = "", timeout: float = 5400,
                 log=print) -> dict:
    """time_op for every operation (the suite's, fewest cases first), written to `out` after
    each; an `out` from an earlier run is continued. `timeout` bounds the whole call: an
    operation it cuts short is not written (its runs would not be comparable)."""
    if ops is None:
        counts = suite_ops()
        ops = sorted(counts, key=lambda op: (counts[op], op))
    res = load(out) if out.exists() else {"machine": _machine(), "regex": regex, "ops": {}}
    res["cores"] = len(os.sched_getaffinity(0))

    def progress(op, t):
        res.setdefault("partial", {})[op] = t
        save(out, res)

    with tempfile.TemporaryDirectory(prefix="ggml-time-") as work:
        for op, left in _pending(ops, res["ops"], timeout):
            t = time_op(op, regex, Path(work), left, lambda t: progress(op, t))
            runs = [t[k] for k in RUNS + COMMON if k in t]
            if any(k not in t for k in RUNS + (COMMON if t.get("common") else ())) or \
                    any(r["returncode"] == -9 for r in runs):
                break                   # cut short by the deadline: not a figure (kept as "partial")
            res["ops"][op] = t
            res["partial"].pop(op)
            save(out, res)
            log(f"{op:24s} " + "  ".join(f"{k} {t[k]['seconds']:7.1f} s" for k in RUNS + COMMON if k in t))
    return res


def time_add(result: dict, where: str, shards: list[dict], reference: dict) -> list[str]:
    """Fold into a `time` result the operations that `shards` (`time` runs of one operation cut
    by -p regexes, side by side, each on cores of its own) timed on another machine, `where`:
    each run's seconds, CPU seconds and statuses are the sums over the shards. An operation is
    taken only where its shards' cold jitcoop runs hold as many cases as the `reference` (the
    H100's list) has: the shards cover it. Returns the operations added."""
    by_op: dict[str, list[tuple[dict, dict]]] = {}
    for s in shards:
        for op, t in s.get("ops", {}).items():
            by_op.setdefault(op, []).append((t, s))
    want = Counter(c.split("(", 1)[0] for c in reference["cases"])
    added = []
    for op, parts in sorted(by_op.items()):
        got = sum(sum(t["jitcoop_cold"]["statuses"].values()) for t, _ in parts)
        if got != want[op]:
            print(f"{op}: the shards hold {got} cases of {want[op]}; not added")
            continue
        total = {}
        for r in RUNS:
            st = Counter()
            for t, _ in parts:
                st.update(t[r]["statuses"])
            total[r] = {"seconds": round(sum(t[r]["seconds"] for t, _ in parts), 1),
                        "cpu_seconds": round(sum(t[r]["cpu_seconds"] for t, _ in parts), 1),
                        "returncode": next((t[r]["returncode"] for t, _ in parts if t[r]["returncode"]), 0),
                        "statuses": dict(st)}
        total["where"] = {"machine": where, "shards": len(parts),
                          "cores per shard": sorted({s.get("cores") for _, s in parts})}
        result["ops"][op] = total
        added.append(op)
    return added


def _machine() -> str:
    try:
        model = re.search(r"^model name\s*: (.*)$", Path("/proc/cpuinfo").read_text(), re.M).group(1)
    except (OSError, AttributeError):
        model = platform.machine()
    return f"{os.cpu_count()} CPUs, {model}"


def load(path: Path) -> dict:
    """A result written by `run --json` (gzip-compressed where the name ends in .gz: the H100's
    references under tests/oracle/ggml/)."""
    path = Path(path)
    if path.suffix == ".gz":
        with gzip.open(path, "rt") as f:
            return json.load(f)
    return json.loads(path.read_text())


def save(path: Path, result: dict):
    """Write a result (gzip-compressed where the name ends in .gz) in one step: a run stopped
    while writing leaves the previous result whole."""
    path = Path(path)
    text = json.dumps(result, indent=0 if path.suffix == ".gz" else 1, sort_keys=True)
    tmp = path.with_name(path.name + ".part")
    tmp.write_bytes(gzip.compress(text.encode()) if path.suffix == ".gz" else text.encode())
    os.replace(tmp, path)


def add(result: dict, where: str, shards: list[dict]) -> int:
    """Fold into `result` the cases of `shards` (runs of the same path and driver, on another
    machine, `where`, or on the result's own where `where` is empty): each operation's cases
    and seconds grow by theirs, and result["elsewhere"] counts the cases each other machine
    added. A case both hold must have one status in both. Returns how many cases were added."""
    part = merge(shards)
    if (part["path"], part["driver"]) != (result["path"], result["driver"]):
        raise ValueError(f"{part['path']} on {part['driver']} into {result['path']} on {result['driver']}")
    differ = [c for c, st in part["cases"].items() if c in result["cases"] and result["cases"][c] != st]
    if differ:
        raise ValueError(f"{len(differ)} cases differ from the result's, e.g. {differ[0]}: "
                         f"{result['cases'][differ[0]]} there, {part['cases'][differ[0]]} here")
    new = {c: st for c, st in part["cases"].items() if c not in result["cases"]}
    ops = result.setdefault("ops", {})
    for op, o in part["ops"].items():
        had = [c for c in result["cases"] if c.split("(", 1)[0] == op]
        if op in ops and had and all(c in part["cases"] for c in had):
            ops[op] = dict(o)            # run whole again: its own run stands for it
        elif op in ops:
            ops[op]["seconds"] = round(ops[op]["seconds"] + o["seconds"], 1)
            ops[op]["cases"] += sum(1 for c in new if c.split("(", 1)[0] == op)
        else:
            ops[op] = dict(o)
    result["cases"].update(new)
    if new and where:
        result.setdefault("elsewhere", {})[where] = result.get("elsewhere", {}).get(where, 0) + len(new)
    return len(new)


def merge(shards: list[dict]) -> dict:
    """One result of `shards`: runs of the same path and driver over disjoint parts of the suite
    (operations, or one operation cut by -p regexes). An operation's seconds and cases are the
    sums over the shards that ran it; a shard's non-zero return code is kept."""
    first = shards[0]
    for s in shards[1:]:
        if (s["path"], s["driver"]) != (first["path"], first["driver"]):
            raise ValueError(f"shards of {first['path']} on {first['driver']} and {s['path']} on {s['driver']}")
    res = {"path": first["path"], "driver": first["driver"], "regex": "", "seconds": 0.0, "returncode": 0,
           "cases": {}, "ops": {}}
    for s in shards:
        overlap = res["cases"].keys() & s["cases"].keys()
        if overlap:
            raise ValueError(f"shards overlap in {len(overlap)} cases, e.g. {min(overlap)}")
        res["cases"].update(s["cases"])
        ops = s.get("ops")
        if not isinstance(ops, dict):       # a run without --each-op: its operation from its cases
            names = sorted({c.split("(")[0] for c in s["cases"]}) or ["(none)"]
            if len(names) > 1:
                raise ValueError(f"a shard of {len(names)} operations ({', '.join(names[:4])}...) run without "
                                 "--each-op has no seconds per operation: run one operation a shard, or --each-op")
            ops = {names[0]: {"seconds": s["seconds"], "returncode": s["returncode"], "cases": len(s["cases"])}}
        for op, o in ops.items():
            m = res["ops"].setdefault(op, {"seconds": 0.0, "returncode": 0, "cases": 0})
            m["seconds"] = round(m["seconds"] + o["seconds"], 1)
            m["cases"] += o["cases"]
            m["returncode"] = m["returncode"] or o["returncode"]
        for op, tail in s.get("tails", {}).items():
            res.setdefault("tails", {})[op] = tail
        res["returncode"] = res["returncode"] or s["returncode"]
    res["seconds"] = round(sum(o["seconds"] for o in res["ops"].values()), 1)
    return res


def per_op(result: dict) -> dict:
    """{op: Counter(status)}."""
    out = {}
    for case, status in result["cases"].items():
        out.setdefault(case.split("(", 1)[0], Counter())[status] += 1
    return out


def compare(reference: dict, result: dict) -> dict:
    """What differs from the reference: cases passing there and failing (or missing) here, and
    cases "not supported" in one run only."""
    ref, got = reference["cases"], result["cases"]
    common = ref.keys() & got.keys()
    return {
        "failed": sorted(c for c, s in got.items() if s == "FAIL"),
        "passing_there_not_here": sorted(c for c in common if ref[c] == "OK" and got[c] != "OK"),
        "supported_differently": sorted(c for c in common if (ref[c] == "not supported") != (got[c] == "not supported")),
        "missing": sorted(ref.keys() - got.keys()),
    }


def table(results: list[dict]) -> str:
    """A Markdown table of results side by side (one per path or driver): per operation, cases
    passed / failed / not supported, and seconds where each operation ran on its own."""
    counts = [per_op(r) for r in results]
    ops = sorted({op for c in counts for op in c})
    head = ["operation"] + [f"{r['path']} on {r['driver']}" for r in results]
    rows = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]

    def cell(r, c, op):
        c = c.get(op)
        if not c:
            return "not run"
        t = r.get("ops", {}).get(op)
        s = f"{c['OK']} / {c['FAIL']} / {c['not supported']}"
        return s + (f", {t['seconds']:.0f} s" if t else "")
    for op in ops:
        rows.append("| " + " | ".join([op] + [cell(r, c, op) for r, c in zip(results, counts)]) + " |")
    total = ["all"]
    for r in results:
        c = Counter(r["cases"].values())
        total.append(f"{c['OK']} / {c['FAIL']} / {c['not supported']}, {r['seconds']:.0f} s")
    rows.append("| " + " | ".join(total) + " |")
    return "\n".join(rows)


def results_table(reference: dict, results: list[dict]) -> str:
    """A Markdown table of the H100's reference beside results of jitcoop's paths: per
    operation, its cases, the H100's passed / not supported, and for each result passed /
    failed / not supported with the seconds its runs took (how many ran, where not all; "—"
    where none did); the last row sums them (hours)."""
    ops = sorted({c.split("(", 1)[0] for c in reference["cases"]})
    head = ["operation", "cases", "H100, each path: passed / not supported"] + \
        [f"jitcoop {_PATH_NAMES.get(r['path'], r['path'])}" for r in results]
    rows = ["| " + " | ".join(head) + " |", "| --- | ---: |" + " --- |" * (len(head) - 2)]
    ref_ops = {op: Counter() for op in ops}
    for c, st in reference["cases"].items():
        ref_ops[c.split("(", 1)[0]][st] += 1
    mine = [{op: Counter() for op in ops} for _ in results]
    for r, m in zip(results, mine):
        for c, st in r["cases"].items():
            if c in reference["cases"]:
                m[c.split("(", 1)[0]][st] += 1

    def cell(r, c, n, seconds):
        ran = sum(c.values())
        if not ran:
            return "—"
        out = f"{c['OK']} / {c['FAIL']} / {c['not supported']}"
        if ran < n:
            out += f" ({ran} of {n} run)"
        return out + (f", {seconds}" if seconds else "")
    for op in ops:
        n = sum(ref_ops[op].values())
        cells = [cell(r, m[op], n, f"{r['ops'][op]['seconds']:.0f} s"
                      if r.get("ops", {}).get(op, {}).get("seconds") else "")
                 for r, m in zip(results, mine)]
        rows.append(f"| {op} | {n} | {ref_ops[op]['OK']} / {ref_ops[op]['not supported']} | " + " | ".join(cells) + " |")
    total = Counter(reference["cases"].values())
    cells = []
    for r, m in zip(results, mine):
        c = sum(m.values(), Counter())
        hours = sum(o.get("seconds", 0) for o in r.get("ops", {}).values()) / 3600
        cells.append(cell(r, c, len(reference["cases"]), f"{hours:.1f} h"))
    rows.append(f"| **all** | {len(reference['cases'])} | {total['OK']} / {total['not supported']} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


_PATH_NAMES = {"coopmat2": "coopmat2", "coopmat1": "KHR coopmat", "scalar": "scalar"}


def timing_table(result: dict) -> str:
    """A Markdown table of a `time` result: per operation, the seconds of each run and jitcoop's
    cold time over lavapipe's; the sums over the operations timed."""
    head = ["operation"] + [r.replace("_", " ") for r in RUNS] + ["cold, jitcoop / lavapipe"]
    rows = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]

    def ratio(t):
        if t.get("common") == 0:
            return "— (lavapipe runs none)"
        cold = t.get(COMMON[0], t["jitcoop_cold"])
        out = f"{cold['seconds'] / max(t['lavapipe_cold']['seconds'], 0.05):.2f}"
        return out + (f" ({COMMON[0].replace('_', ' ')} {cold['seconds']:.1f}: the {t['common']} cases "
                      "lavapipe runs)" if COMMON[0] in t else "")
    here = {op: t for op, t in result["ops"].items() if "where" not in t}
    for op, t in sorted(here.items()):
        rows.append("| " + " | ".join([op] + [f"{t[r]['seconds']:.1f}" for r in RUNS] + [ratio(t)]) + " |")
    sums = {r: {"seconds": sum(t[r]["seconds"] for t in here.values())} for r in RUNS}
    rows.append("| " + " | ".join([f"all {len(here)}"] + [f"{sums[r]['seconds']:.0f}" for r in RUNS]
                                  + [ratio(sums)]) + " |")
    # operations timed on another machine in shards side by side: apart, and not in the sums
    for op, t in sorted((op, t) for op, t in result["ops"].items() if "where" in t):
        w = t["where"]
        rows.append("| " + " | ".join([f"{op} (in {w['shards']} shards of {'/'.join(map(str, w['cores per shard']))} "
                                       f"cores: {w['machine']})"]
                                      + [f"{t[r]['seconds']:.1f}" for r in RUNS] + [ratio(t)]) + " |")
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("path", choices=PATHS)
    r.add_argument("-o", "--ops", default="")
    r.add_argument("-p", "--regex", default="")
    r.add_argument("--driver", choices=("jitcoop", "lavapipe", "system"), default="jitcoop")
    r.add_argument("--cache", type=Path)
    r.add_argument("--json", type=Path)
    r.add_argument("-j", "--jobs", type=int, default=1, help="test-backend-ops' parallel workers")
    r.add_argument("--timeout", type=float, default=5400)
    r.add_argument("--each-op", action="store_true", help="each operation in its own run (needs --json)")
    c = sub.add_parser("compare")
    c.add_argument("reference", type=Path)
    c.add_argument("result", type=Path)
    t = sub.add_parser("table")
    t.add_argument("results", type=Path, nargs="+")
    tm = sub.add_parser("time")
    tm.add_argument("out", type=Path)
    tm.add_argument("-o", "--ops", default="")
    tm.add_argument("-p", "--regex", default="")
    tm.add_argument("--timeout", type=float, default=5400)
    m = sub.add_parser("merge")
    m.add_argument("out", type=Path)
    m.add_argument("shards", type=Path, nargs="+")
    rs = sub.add_parser("results")
    rs.add_argument("reference", type=Path)
    rs.add_argument("results", type=Path, nargs="+")
    ad = sub.add_parser("add")
    ad.add_argument("result", type=Path)
    ad.add_argument("where")
    ad.add_argument("shards", type=Path, nargs="+")
    ta = sub.add_parser("time-add")
    ta.add_argument("result", type=Path)
    ta.add_argument("where")
    ta.add_argument("reference", type=Path)
    ta.add_argument("shards", type=Path, nargs="+")
    a = ap.parse_args(argv)
    if a.cmd == "time":
        time_each_op(a.out, a.ops.split(",") if a.ops else None, a.regex, a.timeout)
        return 0
    if a.cmd == "merge":
        save(a.out, merge([load(f) for f in a.shards]))
        return 0
    if a.cmd == "results":
        print(results_table(load(a.reference), [load(f) for f in a.results]))
        return 0
    if a.cmd == "time-add":
        res = load(a.result)
        print("added:", " ".join(time_add(res, a.where, [load(f) for f in a.shards], load(a.reference))) or "none")
        save(a.result, res)
        return 0
    if a.cmd == "add":
        res = load(a.result)
        print(f"{add(res, a.where, [load(f) for f in a.shards])} cases added")
        save(a.result, res)
        return 0
    if a.cmd == "table":
        results = [load(f) for f in a.results]
        print("\n\n".join(timing_table(r) for r in results) if "cases" not in results[0] else table(results))
        return 0
    if a.cmd == "run":
        if a.each_op:
            if not a.json:
                ap.error("--each-op writes its result after each operation: give --json")
            res = run_each_op(a.path, a.json, a.ops.split(",") if a.ops else None, a.regex, a.driver, a.cache,
                              a.timeout, a.jobs)
        else:
            res = run(a.path, a.ops, a.regex, a.driver, a.cache, a.timeout, a.jobs)
        if a.json and not a.each_op:
            save(a.json, res)
        for op, counts in sorted(per_op(res).items()):
            print(f"{op:24s} {counts['OK']:5d} passed {counts['FAIL']:4d} failed {counts['not supported']:5d} "
                  f"not supported")
        print(f"{a.path} on {a.driver}: {len(res['cases'])} cases in {res['seconds']} s, exit {res['returncode']}")
        return 0 if res["returncode"] == 0 else 1
    diff = compare(load(a.reference), load(a.result))
    for k, v in diff.items():
        print(f"{k}: {len(v)}")
        for case in v[:20]:
            print(f"  {case}")
    return 0 if not (diff["failed"] or diff["passing_there_not_here"]) else 1


if __name__ == "__main__":
    sys.exit(main())
