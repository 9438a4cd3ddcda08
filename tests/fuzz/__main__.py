"""Fuzzing jitcoop from the command line:

    python3 -m tests.fuzz run --count 2000 --seed 1 [--out DIR] [--shaders core/ coopmat] [--nice 19]
    python3 -m tests.fuzz summary [--out DIR]
    python3 -m tests.fuzz replay FILE.spv [--recipe SHADER]
    python3 -m tests.fuzz dispatch --count 1000 [--seed 1]
    python3 -m tests.fuzz keep OUT/repro/NAME.json NAME
    python3 -m tests.fuzz cache --count 1000 [--seed 1]

`run` mutates the test and benchmark shaders, runs each mutant through load -> kernel ->
dispatch in a worker process with memory and CPU limits, prints each new failure signature as it
comes (and keeps a minimized reproducer under OUT/repro/), and ends with the summary; it resumes
a campaign whose results.jsonl is already in OUT. `replay` runs one module the same way and
prints the result. `dispatch` spoils the recipes' dispatches of the real shaders
(tests/fuzz/dispatch.py). `cache` damages disk cache entries, each followed by a run that must
give numpy's bytes (tests/fuzz/cache.py). `keep` copies a reproducer into the committed corpus (tests/fuzz/corpus).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .campaign import Campaign, case_for, seed_shaders, summary
from .runner import ROOT, Runner

DEFAULT_OUT = ROOT / ".pytest_cache" / "fuzz"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tests.fuzz")
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="a campaign")
    run.add_argument("--count", type=int, default=1000)
    run.add_argument("--seed", type=int, default=1)
    run.add_argument("--shaders", nargs="+", default=(), help="only seed shaders whose path contains one of these")
    run.add_argument("--skip", nargs="+", default=(), help="leave out seed shaders whose path contains one of these")
    run.add_argument("--word-share", type=float, default=0.1, help="share of word-level mutation steps")
    run.add_argument("--compile-timeout", type=float, default=60.0)
    run.add_argument("--dispatch-timeout", type=float, default=2.0)
    run.add_argument("--memory-gb", type=float, default=4.0, help="the worker's address-space limit")
    run.add_argument("--nice", type=int, default=0, help="niceness of the worker process")
    run.add_argument("--minimize-budget", type=int, default=150, help="runs spent shrinking each new failure")
    run.add_argument("--no-baseline", action="store_true", help="skip running each seed shader unmutated first")
    run.add_argument("--max-compile", type=float, default=60.0,
                     help="leave out seed shaders whose own compile takes more CPU seconds than this")
    for p in (run, sub.add_parser("summary", help="the summary of a campaign's results")):
        p.add_argument("--out", default=str(DEFAULT_OUT))
    dp = sub.add_parser("dispatch", help="spoiled dispatches of the recipes' real shaders")
    dp.add_argument("--count", type=int, default=1000)
    dp.add_argument("--seed", type=int, default=1)
    dp.add_argument("--shaders", nargs="+", default=(), help="only recipes whose path contains one of these")
    dp.add_argument("--nice", type=int, default=0)
    cp = sub.add_parser("cache", help="damaged disk cache entries, each followed by a checked run")
    cp.add_argument("--count", type=int, default=1000)
    cp.add_argument("--seed", type=int, default=1)
    cp.add_argument("--json", action="store_true", help="print the outcomes as one JSON line (for tests)")
    kp = sub.add_parser("keep", help="copy a campaign's reproducer into the committed corpus")
    kp.add_argument("repro", help="OUT/repro/NAME.json of a campaign")
    kp.add_argument("name", help="the corpus entry's name")
    rp = sub.add_parser("replay", help="run one module as a fuzz case")
    rp.add_argument("file")
    rp.add_argument("--recipe", help="the seed shader whose recipe dispatches it")
    a = ap.parse_args(argv)

    if a.cmd == "summary":
        rows = [json.loads(ln) for ln in (Path(a.out) / "results.jsonl").read_text().splitlines() if ln.strip()]
        print(summary(rows))
        return 0
    if a.cmd == "dispatch":
        return dispatch_campaign(a)
    if a.cmd == "cache":
        from .cache import main as cache_main
        return cache_main(a.count, a.seed, a.json)
    if a.cmd == "keep":
        return keep(Path(a.repro), a.name)
    if a.cmd == "replay":
        from metamorphic.recipes import RECIPES
        with Runner() as r:
            res = r.run(case_for(a.recipe or a.file, a.recipe if a.recipe in RECIPES else None, 0,
                                 data=Path(a.file).read_bytes()))
        for k, v in res.items():
            print(f"{k}: {v}")
        return 0 if res["outcome"] not in ("internal", "other", "crash", "timeout", "memory", "changed") else 1

    out = Path(a.out)
    cache = out / "cache"
    shaders = seed_shaders(a.shaders, a.skip)
    with Runner(memory=int(a.memory_gb * (1 << 30)), cpu=a.compile_timeout + a.dispatch_timeout + 60,
                wall=2 * (a.compile_timeout + a.dispatch_timeout) + 60, cache_dir=str(cache), nice=a.nice) as runner:
        camp = Campaign(out, runner, a.minimize_budget, log=lambda s: print(s, flush=True))
        if not a.no_baseline:
            shaders = camp.baseline(shaders, a.max_compile)
        if not shaders:
            sys.exit("no seed shader to mutate (see --shaders, --skip, --max-compile)")
        camp.run(shaders, a.count, a.seed, word_share=a.word_share, compile_timeout=a.compile_timeout,
                 dispatch_timeout=a.dispatch_timeout)
        for p in cache.glob("k_*"):         # the mutants' kernels: never served again
            p.unlink()
    print(summary(camp.rows))
    return 0


def dispatch_campaign(a) -> int:
    """Random spoilings of the recipes' dispatches; every failure printed, counts at the end."""
    import collections
    from metamorphic.recipes import RECIPES
    from .campaign import committed_shaders
    names = [n for n in committed_shaders() if n in RECIPES and (not a.shaders or any(s in n for s in a.shaders))]
    counts = collections.Counter()
    with Runner(nice=a.nice, cpu=900, wall=1800) as r:       # the first case of a shader compiles it
        for i in range(a.count):
            recipe = names[(a.seed * 7919 + i) % len(names)]
            res = r.run({"kind": "dispatch", "recipe": recipe, "seed": a.seed * 10**7 + i})
            counts[res["outcome"]] += 1
            if res["outcome"] not in ("binding", "execution", "success", "skipped"):
                print(f"{res['outcome']}: {recipe} seed {a.seed * 10**7 + i}: {res.get('mutations')}: "
                      f"{res.get('message') or res.get('detail')}", flush=True)
    print(" ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    return 0


def keep(repro: Path, name: str) -> int:
    """A reproducer into tests/fuzz/corpus, with what it does now as its expectation."""
    import re
    import shutil
    from .corpus import CORPUS
    info = json.loads(repro.read_text())
    data = repro.with_suffix(".spv").read_bytes()
    case = case_for(info["shader"], info["recipe"], info["seed"], data=data)
    case["fit"] = info["fit"]
    with Runner() as r:
        res = r.run(case)
    entry = {"shader": info["shader"], "recipe": info["recipe"], "fit": info["fit"], "expect": res["outcome"],
             "match": re.escape((res.get("reason") or res.get("message") or "")[:80]),
             "found": f"{info['signature']} ({info['shader']} seed {info['seed']}: {'; '.join(info['mutations'])})"}
    shutil.copy(repro.with_suffix(".spv"), CORPUS / f"{name}.spv")
    (CORPUS / f"{name}.json").write_text(json.dumps(entry, indent=1) + "\n")
    print(f"{CORPUS / name}: {res['outcome']}: {res.get('message', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
