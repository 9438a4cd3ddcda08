"""A fuzz campaign: mutants of every test and benchmark shader, run through load -> kernel ->
dispatch by a worker process, counted per outcome, with a minimized reproducer kept for each new
failure signature.

Cases are named (shader, seed): case i of a campaign with seed S takes shader i mod n (in a
shuffled order) and mutant seed S * 10^7 + i, so a campaign is reproducible and can be resumed:
results go to `results.jsonl` in the output folder, one line per case, and a rerun skips the
cases already there.
"""
from __future__ import annotations

import collections
import hashlib
import json
import random
import re
import statistics
import subprocess
import time
from pathlib import Path

from .case import CLEAN, FAILURES, OUTCOMES, normalized
from .minimize import minimize
from .mutate import mutant
from .runner import ROOT, Runner


def seed_shaders(patterns=(), skip=()) -> list[tuple[str, str | None]]:
    """(shader path from the repository root, its recipe or None) for every committed .spv under
    tests/ and benchmarks/ (the fuzz corpus's own reproducers left out)."""
    from metamorphic.recipes import RECIPES
    out = []
    for rel in committed_shaders():
        if rel.startswith("tests/fuzz/") or (patterns and not any(s in rel for s in patterns)) \
                or any(s in rel for s in skip):
            continue
        out.append((rel, rel if rel in RECIPES else None))
    return out


def committed_shaders() -> list[str]:
    """The .spv files git tracks under tests/ and benchmarks/ (work in progress left out), or every
    one there outside a git checkout."""
    try:
        r = subprocess.run(["git", "ls-files", "-z", "tests", "benchmarks"], cwd=ROOT, capture_output=True,
                           check=True, timeout=60)
        files = [f for f in r.stdout.decode().split("\0") if f.endswith(".spv")]
    except (OSError, subprocess.SubprocessError):
        files = []
    if not files:
        files = [str(p.relative_to(ROOT)) for d in ("tests", "benchmarks") for p in (ROOT / d).rglob("*.spv")]
    return sorted(files)


def case_for(shader: str, recipe: str | None, seed: int, *, data: bytes | None = None,
             word_share: float = 0.1, compile_timeout: float = 60.0, dispatch_timeout: float = 2.0) -> dict:
    """The case of mutant `seed` of a shader (or of the given bytes, unmutated)."""
    rng = random.Random(seed)
    steps = []
    if data is None:
        data, steps = mutant((ROOT / shader).read_bytes(), seed, word_share=word_share)
    return {"name": f"{shader}#{seed}", "shader": shader, "recipe": recipe, "seed": seed, "data": data,
            "mutations": steps, "fit": rng.random() < 0.9, "compile_timeout": compile_timeout,
            "dispatch_timeout": dispatch_timeout, "threads": 1}


def slug(signature: str) -> str:
    words = re.sub(r"[^A-Za-z0-9]+", "_", signature).strip("_")[:60]
    return f"{words}_{hashlib.sha1(signature.encode()).hexdigest()[:6]}"


class Campaign:
    def __init__(self, out: Path, runner: Runner, minimize_budget: int = 150, log=print):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.runner = runner
        self.minimize_budget = minimize_budget
        self.log = log
        self.results_path = self.out / "results.jsonl"
        self.rows = []
        if self.results_path.exists():
            self.rows = [json.loads(ln) for ln in self.results_path.read_text().splitlines() if ln.strip()]
        self.done = {(r["shader"], r["seed"]) for r in self.rows}
        self.signatures = {r["signature"] for r in self.rows if r.get("signature")}

    def baseline(self, shaders, max_compile: float = 60.0):
        """Each seed shader once, unmutated (this also compiles the kernel-library variants they
        need before any compile runs under a time limit). Returns the shaders to mutate: those
        whose own compile takes more than `max_compile` CPU seconds are left out (each mutant would
        cost as much), with a line saying so."""
        saved = self.out / "baseline.json"         # a resumed campaign mutates the same shaders
        if saved.exists():
            left_out = set(json.loads(saved.read_text())["left_out"])
            return [(s, r) for s, r in shaders if s not in left_out]
        keep = []
        for shader, recipe in shaders:
            r = self.runner.run(case_for(shader, recipe, 0, data=(ROOT / shader).read_bytes(),
                                         compile_timeout=0))
            cpu = r.get("compile_cpu_s")
            if r["outcome"] in ("timeout", "crash", "memory") or (cpu or 0) > max_compile:
                self.log(f"baseline: {shader}: left out ({r['outcome']}, compile {cpu or 0:.1f} CPU s)")
                continue
            if r["outcome"] != "success":
                self.log(f"baseline: {shader}: {r['outcome']}: {(r.get('message') or '')[:160]}")
            keep.append((shader, recipe))
        saved.write_text(json.dumps({"left_out": sorted({s for s, _ in shaders} - {s for s, _ in keep})}) + "\n")
        return keep

    def run(self, shaders, count: int, seed: int, **case_kw):
        order = shaders[:]
        random.Random(seed).shuffle(order)
        t0 = time.perf_counter()
        for i in range(count):
            shader, recipe = order[i % len(order)]
            s = seed * 10**7 + i
            if (shader, s) in self.done:
                continue
            case = case_for(shader, recipe, s, **case_kw)
            r = self.runner.run(case)
            row = {"shader": shader, "seed": s, "mutations": case["mutations"], "outcome": r["outcome"],
                   "stage": r.get("stage"), "signature": r.get("signature"), "located": r.get("located"),
                   "compile_s": r.get("compile_s"), "compile_cpu_s": r.get("compile_cpu_s"),
                   "run_s": r.get("run_s"), "wall_s": r.get("wall_s"),
                   "message": (r.get("message") or r.get("detail") or "")[:300]}
            self.rows.append(row)
            self.done.add((shader, s))
            with self.results_path.open("a") as f:
                f.write(json.dumps(row) + "\n")
            sig = r.get("signature")
            if sig and sig not in self.signatures:
                self.signatures.add(sig)
                self.log(f"new failure {sig}: {shader} seed {s}: {row['message'][:200]}")
                self.keep(case, r)
            if (i + 1) % 200 == 0:
                if self.runner.cache_dir:       # mutants' kernels are never served again
                    for p in Path(self.runner.cache_dir).glob("k_*"):
                        p.unlink(missing_ok=True)
                self.log(f"[{i + 1}/{count}] {time.perf_counter() - t0:.0f} s  " + self.counts_line())

    def keep(self, case: dict, result: dict):
        """Minimize a failing case and keep it under repro/."""
        sig = result["signature"]

        def fails(data: bytes) -> bool:
            r = self.runner.run(dict(case, data=data, name=case["name"] + "-min"))
            return r.get("signature") == sig
        small, runs = minimize(case["data"], fails, self.minimize_budget) if self.minimize_budget else \
            (case["data"], 0)
        d = self.out / "repro"
        d.mkdir(exist_ok=True)
        name = slug(sig)
        (d / f"{name}.spv").write_bytes(small)
        info = {k: case[k] for k in ("shader", "recipe", "seed", "mutations", "fit")}
        info.update(signature=sig, message=result.get("message", ""), minimize_runs=runs,
                    bytes=len(small), original_bytes=len(case["data"]),
                    traceback=result.get("traceback") or result.get("last_words", ""))
        (d / f"{name}.json").write_text(json.dumps(info, indent=1) + "\n")
        self.log(f"  kept {d / name}.spv ({len(small)} bytes of {len(case['data'])}, {runs} runs)")

    def counts_line(self) -> str:
        c = collections.Counter(r["outcome"] for r in self.rows)
        return " ".join(f"{o}={c[o]}" for o in OUTCOMES if c[o])


def summary(rows: list[dict]) -> str:
    """The campaign in numbers: outcomes, compile times, failures by signature, unlocated errors."""
    c = collections.Counter(r["outcome"] for r in rows)
    loaded = [r for r in rows if r["outcome"] != "spirv_load"]
    lines = [f"{len(rows)} mutants, {len(loaded)} loaded", "", "| outcome | mutants |", "| --- | --- |"]
    lines += [f"| {o} | {c[o]} |" for o in OUTCOMES]
    lines.append("")
    for key, what in (("compile_s", "wall-clock"), ("compile_cpu_s", "CPU")):
        times = sorted(r[key] for r in rows if r.get(key) is not None)
        if times:
            lines += [f"compile ({what} seconds, compiles that ended or timed out): {len(times)}, median "
                      f"{statistics.median(times):.3f} s, 99th percentile {times[int(0.99 * (len(times) - 1))]:.2f} s, "
                      f"longest {times[-1]:.2f} s"]
    slow = sorted((r for r in rows if (r.get("compile_cpu_s") or 0) > 10), key=lambda r: -r["compile_cpu_s"])[:10]
    for r in slow:
        lines.append(f"  {r['compile_cpu_s']:.1f} CPU s: {r['shader']} seed {r['seed']}: {'; '.join(r['mutations'])}")
    fails = collections.defaultdict(list)
    for r in rows:
        if r["outcome"] in FAILURES:
            fails[r["signature"]].append(r)
    if fails:
        lines += ["", "failures by signature:"]
        for sig, rs in sorted(fails.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {len(rs):5d}  {sig}  (e.g. {rs[0]['shader']} seed {rs[0]['seed']}: "
                         f"{rs[0]['message'][:150]})")
    unloc = collections.Counter(normalized(r["message"]) for r in rows
                                if r["outcome"] in ("spirv_kernel",) and r.get("located") is False)
    if unloc:
        lines += ["", "SpirvErrors at kernel() that name no instruction:"]
        lines += [f"  {n:5d}  {m}" for m, n in unloc.most_common(15)]
    assert set(c) <= set(CLEAN) | set(FAILURES), set(c)
    return "\n".join(lines)
