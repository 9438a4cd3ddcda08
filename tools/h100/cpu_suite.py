"""ggml's suite through jitcoop's driver on a many-core machine, in shards run side by side.

    python3 tools/h100/cpu_suite.py start SECONDS [PATH...]  # launch the shards (of PATHs), each ending by SECONDS
    python3 tools/h100/cpu_suite.py plan PLAN.json N PATH:OP...  # (here) the cases results lack, in N shards
    python3 tools/h100/cpu_suite.py start SECONDS PLAN.json  # launch a plan's shards instead
    python3 tools/h100/cpu_suite.py time SECONDS CORES OP...  # `ggml_suite.py time` in shards of CORES cores
    python3 tools/h100/cpu_suite.py wait SECONDS      # wait up to SECONDS; pack what is written
    python3 tools/ggml_suite.py merge OUT.json.gz SHARD.json...   # (here) one result per path

A whole path takes hours on two cores; the lent GPU machine has 16 (its GPU is not used). One
test-backend-ops compiles its shaders one at a time, so the suite is cut into shards by
operation and, for matrix multiplication and flash attention, by a `-p` regex over the case's
parameters; every set of shards below covers its operation (the last regex is the complement of
the others). Each shard is a `ggml_suite.py run --each-op` of its own, started in a session of its
own so that it outlives the call that started it, and writes its JSON after each operation to
/tmp/shards; `wait` packs them into $OUT/shards.tgz.

On the lent machine, `source tools/h100/cpu_setup.sh` first: it builds jitcoop's driver for that
machine's python3 and unpacks get-ggml's folder; then, in one call,
`python3 tools/h100/cpu_suite.py start 230 && python3 tools/h100/cpu_suite.py wait 250`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHARDS = Path("/tmp/shards")

_MM_TYPES = ("f16|bf16", "f32|q4_0", "q4_K|q8_0|q4_1|mxfp4|iq2_xxs", "q1_0|q2_0|q5_K|nvfp4|q5_0|q6_K")
MUL_MAT = [f"type_a=({t})," for t in _MM_TYPES] + [f"^(?!.*type_a=({'|'.join(_MM_TYPES)}),)"]
_FA_HSK = ("72", "128|40|80|65", "192|96|256")
_FA_K64 = ("f16|q8_0|q4_0", "bf16|f32|iq4_nl")
FLASH_ATTN = ([f"^hsk=64,.*type_K=({k})," for k in _FA_K64] + [f"^hsk=64,(?!.*type_K=({'|'.join(_FA_K64)}),)"]
              + [f"^hsk=({h})," for h in _FA_HSK]
              + [f"^(?!hsk=(64|{'|'.join(_FA_HSK)}),)"])


def shards(rest_bins: list[list[str]]) -> list[tuple[str, str, list[str], str]]:
    """(path, name, operations, regex) of every shard."""
    out = []
    for path in ("coopmat2", "scalar"):
        out += [(path, f"mm{i}", ["MUL_MAT"], r) for i, r in enumerate(MUL_MAT)]
        out += [(path, f"fa{i}", ["FLASH_ATTN_EXT"], r) for i, r in enumerate(FLASH_ATTN)]
    out += [("coopmat2", f"ops{i}", ops, "") for i, ops in enumerate(rest_bins)]
    return out


def rest_bins(n: int = 4) -> list[list[str]]:
    """The operations other than matrix products and flash attention (the H100's reference lists
    them), in n shards of about equal time by the KHR coopmat path's seconds per operation
    (benchmarks/results/ggml/), longest first onto the least loaded."""
    sys.path.insert(0, str(ROOT / "tools"))
    import ggml_suite
    ref = ggml_suite.load(ROOT / "tests" / "oracle" / "ggml" / "h100_coopmat2.json.gz")
    seconds = ggml_suite.load(ROOT / "benchmarks" / "results" / "ggml" / "jitcoop_coopmat1.json.gz")["ops"]
    ops = sorted({c.split("(", 1)[0] for c in ref["cases"]} - {"MUL_MAT", "FLASH_ATTN_EXT"},
                 key=lambda op: -seconds.get(op, {}).get("seconds", 10.0))
    bins, load = [[] for _ in range(n)], [0.0] * n
    for op in ops:
        i = load.index(min(load))
        bins[i].append(op)
        load[i] += seconds.get(op, {}).get("seconds", 10.0)
    return bins


# test-backend-ops takes the cases of a plan's shard as one `-o` argument of full case names, and
# Linux limits one argument to 128 KiB
_ARG_BYTES = 120_000


def plan(out: str, n: str, *path_ops: str) -> list:
    """For each PATH:OP, the cases of the H100's reference (tests/oracle/ggml/) that this
    project's results (benchmarks/results/ggml/) lack, dealt in turn onto `n` shards of their own
    (so each gets a like mix of large and small cases) of at most _ARG_BYTES of names each; what
    does not fit waits for the next plan. Written to `out` as [[path, shard name, [case, ...]], ...]."""
    sys.path.insert(0, str(ROOT / "tools"))
    import ggml_suite
    result, left = [], 0
    for path_op in path_ops:
        path, op = path_op.split(":")
        ref = ggml_suite.load(ROOT / "tests" / "oracle" / "ggml" / f"h100_{path}.json.gz")["cases"]
        done = ggml_suite.load(ROOT / "benchmarks" / "results" / "ggml" / f"jitcoop_{path}.json.gz")["cases"]
        cases = [c for c in ref if c.split("(", 1)[0] == op and c not in done]
        left += len(cases)
        shards = [[] for _ in range(int(n))]
        size = [0] * int(n)
        for i, case in enumerate(cases):
            if size[i % len(shards)] + len(case) + 1 <= _ARG_BYTES:
                shards[i % len(shards)].append(case)
                size[i % len(shards)] += len(case) + 1
        result += [[path, f"{op.lower()}{i}", s] for i, s in enumerate(shards) if s]
    Path(out).write_text(json.dumps(result))
    print(f"{left} cases left; {sum(len(c) for _, _, c in result)} in {len(result)} shards")
    return result


def start(seconds: float, *paths: str):
    SHARDS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if paths and paths[0].endswith(".json"):
        todo = [(path, name, [",".join(cases)], "", False)
                for path, name, cases in json.loads(Path(paths[0]).read_text())]
    else:
        todo = [(path, name, ops, regex, True) for path, name, ops, regex in shards(rest_bins())
                if not paths or path in paths]
    for path, name, ops, regex, each_op in todo:
        cmd = [sys.executable, str(ROOT / "tools" / "ggml_suite.py"), "run", path, "-o", ",".join(ops),
               "--timeout", str(seconds), "--json", str(SHARDS / f"{path}_{name}.json")]
        if each_op:
            cmd.append("--each-op")
        if regex:
            cmd += ["-p", regex]
        subprocess.Popen(cmd, stdout=open(SHARDS / f"{path}_{name}.log", "w"), stderr=subprocess.STDOUT,
                         env=env, start_new_session=True, cwd=ROOT)


# `time`'s shards of the matrix products: like numbers of cases, each type's pipelines in one
# shard (a shard's cold run compiles them, so splitting a type would compile them twice)
_MM_TIME_TYPES = ("f16", "f32", "bf16|q4_0", "q4_K|q8_0", "q4_1|mxfp4|iq2_xxs", "q1_0|q2_0|q5_K",
                  "nvfp4|q5_0|q6_K|iq4_nl|q5_1")
TIME_SHARDS = {"MUL_MAT": [f"type_a=({t})," for t in _MM_TIME_TYPES]
                          + [f"^(?!.*type_a=({'|'.join(_MM_TIME_TYPES)}),)"],
               "FLASH_ATTN_EXT": FLASH_ATTN,
               "TOP_K": ["k=(1|2),", "k=(3|7),", "k=(15|100|500),", "^(?!.*k=(1|2|3|7|15|100|500),)"],
               # flash attention's shards 3, 5 and 6 cut once more, by K's type and by head size
               # (each group its own pipelines), to fit side by side in one lent machine's calls
               "FLASH_ATTN_EXT:wide": ["^hsk=72,.*type_K=(f16|q4_0|bf16),", "^hsk=72,.*type_K=(f32|iq4_nl|q4_1),",
                                       "^hsk=72,.*type_K=(q5_0|q5_1|q8_0),", "^hsk=192,", "^hsk=96,",
                                       "^hsk=(256|512),", "^hsk=576,", "^hsk=320,"]}


def start_time(seconds: float, cores: str, *ops: str):
    """`ggml_suite.py time` of each of `ops` in the shards of TIME_SHARDS (an operation not there
    is one shard; `OP:NAME` takes TIME_SHARDS' shards of that name), each pinned to `cores` cores
    of its own, as on a machine of that many cores: its jitcoop runs' worker threads and
    llvmpipe's follow the cores it may use."""
    SHARDS.mkdir(parents=True, exist_ok=True)
    todo = [(op, i, r) for op in ops for i, r in enumerate(TIME_SHARDS.get(op, [""]))]
    n, have = int(cores), sorted(os.sched_getaffinity(0))
    if len(todo) * n > len(have):
        raise SystemExit(f"{len(todo)} shards of {n} cores need {len(todo) * n}; this machine has {len(have)}")
    for k, (name, i, regex) in enumerate(todo):
        cpus = have[k * n:(k + 1) * n]
        shard = f"time_{name.replace(':', '_')}_{i}"
        cmd = ["taskset", "-c", ",".join(map(str, cpus)), sys.executable, str(ROOT / "tools" / "ggml_suite.py"),
               "time", str(SHARDS / f"{shard}.json"), "-o", name.split(":")[0], "--timeout", str(seconds)]
        if regex:
            cmd += ["-p", regex]
        subprocess.Popen(cmd, stdout=open(SHARDS / f"{shard}.log", "w"), stderr=subprocess.STDOUT,
                         env=dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS=str(n)),
                         start_new_session=True, cwd=ROOT)


def wait(seconds: float, *_):
    end = time.time() + seconds
    while time.time() < end:
        busy = subprocess.run(["pgrep", "-f", "ggml_suite.py (run|time)"], capture_output=True,
                              text=True).stdout.split()
        if not busy:
            break
        time.sleep(min(20, max(0.0, end - time.time())))
    for log in sorted(SHARDS.glob("*.log")):
        lines = log.read_text(errors="replace").splitlines()
        print(f"{log.stem:20s} {lines[-1] if lines else ''}")
    out = Path(os.environ.get("OUT", "/tmp"))
    with tarfile.open(out / "shards.tgz", "w:gz") as t:
        for f in SHARDS.iterdir():
            t.add(f, arcname=f.name)


if __name__ == "__main__":
    if sys.argv[1] == "plan":
        plan(*sys.argv[2:])
    elif sys.argv[1] == "time":
        start_time(float(sys.argv[2]), *sys.argv[3:])
    else:
        {"start": start, "wait": wait}[sys.argv[1]](float(sys.argv[2]), *sys.argv[3:])
