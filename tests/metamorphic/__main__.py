"""Metamorphic testing of jitcoop's code generator from the command line:

    python3 -m tests.metamorphic --count 500 --seed 7 [--jobs 4] [--shaders core/ coopmat2] [--tier fast]

runs `count` transformed variants (spread over the selected shaders' recipes), compares each
variant's outputs with its original's bit for bit, prints every failure as it comes and a
summary at the end, and keeps each failing variant (`.spv` and a `.txt` saying how it was made
and what differed) under --save. A variant is reproducible from its shader and seed:
`--shaders PATH --seeds N`. Originals run at the optimized compile tier, variants at --tier
(default optimized; jitcoop.runtime.tiers). Statuses: SAME, SKIPPED (the tools refused the module, with their
message), COMPILE / RUN (load or kernel(), or dispatch, raised), DIFFERS (an output's bytes),
ORIGINAL (the untransformed shader itself fails: no variants of it ran), TRANSFORM-BUG (an own
transformation broke validity: a bug in tests/metamorphic).
"""
from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path

from . import harness, tools
from .recipes import RECIPES, ROOT


def _plan(args) -> dict[str, list[int]]:
    names = sorted(n for n in RECIPES if (not args.shaders or any(s in n for s in args.shaders))
                   and not any(s in n for s in args.skip) and RECIPES[n].size <= args.max_kb * 1024)
    if not names:
        sys.exit("no recipe matches --shaders / --max-kb")
    plan = collections.defaultdict(list)
    if args.seeds:
        for n in names:
            plan[n] += args.seeds
        return plan
    rng = random.Random(args.seed)
    order = names[:]
    rng.shuffle(order)
    for i in range(args.count):
        plan[order[i % len(order)]].append(rng.randrange(1 << 30))
    return plan


def _run_shader(shader: str, seeds: list[int], save: str, tier: str = "optimized") -> list[tuple]:
    """One worker's share: the original once, then each variant. Rows of (shader, seed, status,
    detail, steps, seconds)."""
    spirv = tools.find()
    try:
        bench = harness.Bench(RECIPES[shader])      # (at the optimized tier: JITCOOP_TIER, set in main)
    except Exception as e:      # noqa: BLE001 - the original itself fails: reported, no variants
        return [(shader, None, "original", harness._one_line(e), [], 0.0)]
    original = RECIPES[shader].path.read_bytes()
    rows = []
    for seed in seeds:
        try:
            v = harness.make_variant(shader, original, seed, spirv)
        except harness.TransformBug as e:
            rows.append((shader, seed, "transform-bug", str(e).splitlines()[0], [], 0.0))
            continue
        o = bench.check(v, tier)
        if o.failed and save:
            _keep(save, v, o)
        rows.append((shader, seed, o.status, o.detail, v.steps, o.seconds))
    return rows


def _run_task(task):
    return _run_shader(*task)


def _keep(save: str, v: harness.Variant, o: harness.Outcome):
    d = Path(save)
    d.mkdir(parents=True, exist_ok=True)
    stem = f"{Path(v.shader).stem}-{v.seed}"
    (d / f"{stem}.spv").write_bytes(v.data)
    (d / f"{stem}.txt").write_text(f"shader: {v.shader}\nseed: {v.seed}\nstatus: {o.status}\n"
                                  f"detail: {o.detail}\nsteps:\n" + "".join(f"  {s}\n" for s in v.steps))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.metamorphic", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100, help="variants to run (default 100)")
    ap.add_argument("--seed", type=int, default=0, help="draws the shaders and variant seeds")
    ap.add_argument("--seeds", type=int, nargs="+", help="exactly these variant seeds, per shader")
    ap.add_argument("--shaders", nargs="+", help="only recipes whose path contains one of these")
    ap.add_argument("--skip", nargs="+", default=[], help="leave out recipes whose path contains one of these")
    ap.add_argument("--max-kb", type=float, default=1e9, help="only shaders up to this size")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--per-task", type=int, default=0,
                    help="at most this many variants of a shader per worker task (each task runs the "
                         "original once); default: one task per shader")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="stop after this many seconds and report the variants that finished")
    ap.add_argument("--tier", default="optimized", choices=("optimized", "fast"),
                    help="compile tier of the variants (default optimized; the originals always run optimized)")
    ap.add_argument("--save", default=str(ROOT / ".pytest_cache" / "metamorphic" / "failures"),
                    help="where failing variants are kept ('' for nowhere)")
    args = ap.parse_args(argv)
    os.environ["JITCOOP_TIER"] = "optimized"

    spirv = tools.find()
    print(f"spirv-opt/spirv-val: {spirv or 'none found: every variant is skipped'}")
    plan = _plan(args)
    total = sum(len(s) for s in plan.values())
    print(f"{total} variants of {len(plan)} shaders, {args.jobs} job(s)", flush=True)
    t0 = time.perf_counter()
    rows = []

    def report(batch):
        for shader, seed, status, detail, steps, secs in batch:
            rows.append((shader, seed, status, detail, steps))
            if status not in ("same", "skipped"):
                print(f"{status.upper():>13} {shader} seed {seed}: {detail}", flush=True)
                for s in steps:
                    print(f"{'':>15}{s}")
        done = sum(1 for r in rows if r[2] != "original")
        print(f"  [{done}/{total}] {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)

    tasks = [(s, seeds[k:k + (args.per_task or len(seeds))]) for s, seeds in plan.items()
             for k in range(0, len(seeds), args.per_task or len(seeds))]
    limit = args.time_limit or None
    if args.jobs > 1:
        pool = multiprocessing.get_context("fork").Pool(args.jobs)
        results = pool.imap_unordered(_run_task, [(s, seeds, args.save, args.tier) for s, seeds in tasks])
        try:
            for _ in tasks:
                left = None if limit is None else max(0.0, limit - (time.perf_counter() - t0))
                report(results.next(timeout=left))
        except multiprocessing.TimeoutError:
            print("time limit: the unfinished tasks were stopped")
        pool.terminate()
    else:
        for s, seeds in tasks:
            if limit and time.perf_counter() - t0 > limit:
                print("time limit: the remaining tasks were not run")
                break
            report(_run_shader(s, seeds, args.save, args.tier))

    counts = collections.Counter(r[2] for r in rows)
    skipped = collections.Counter(r[3][:100] for r in rows if r[2] == "skipped")
    ran = sum(n for st, n in counts.items() if st not in ("skipped", "original", "transform-bug"))
    print(f"\n{ran} variants ran in {time.perf_counter() - t0:.0f} s: "
          + ", ".join(f"{n} {st}" for st, n in counts.most_common()))
    for why, n in skipped.most_common():
        print(f"  skipped {n}: {why}")
    failures = [r for r in rows if r[2] in harness.FAILURES + ("original", "transform-bug")]
    if failures and args.save:
        print(f"failing variants kept in {args.save}")
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("JITCOOP_CACHE_DIR", str(ROOT / ".pytest_cache" / "jitcoop"))
    sys.exit(main())
