"""tools/ggml_suite.py's reading of test-backend-ops and the H100's recorded runs of ggml's suite.

The parser is checked against console output as test-backend-ops writes it (colour codes, the
backend header, the three statuses, lines that are not cases); the references
(tests/oracle/ggml/h100_PATH.json.gz: test-backend-ops of Debian's ggml 0.27 on an NVIDIA H100,
driver 580.159.04, one operation per run, on each of ggml's matrix paths) are checked for being
whole runs that ended normally, which tests/test_ggml_suite.py and the driver guide's figures
rely on.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import ggml_suite  # noqa: E402

ORACLE = ROOT / "tests" / "oracle" / "ggml"

OUTPUT = """\
ggml_vulkan: Found 1 Vulkan devices:
ggml_vulkan: 0 = NVIDIA H100 80GB HBM3 (jitcoop nvidia profile) (jitcoop) | uma: 0 | fp16: 1 | matrix cores: NV_coopmat2
Testing 2 devices

Backend 1/2: Vulkan0
  Device description: NVIDIA H100 80GB HBM3 (jitcoop nvidia profile)
  MUL_MAT(type_a=f16,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1): \x1b[1;32mOK\x1b[0m
  MUL_MAT(type_a=q4_0,type_b=f32,m=16,n=9,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1): [MUL_MAT] NMSE = 0.012 > 0.0005 \x1b[1;31mFAIL\x1b[0m
  ABS(type=f16,ne_a=[128,2,2,2],v=0): not supported [Vulkan0]
  1/2 tests passed
  Backend Vulkan0: \x1b[1;31mFAIL\x1b[0m
"""


def test_parse_reads_each_case_and_its_status():
    cases = ggml_suite.parse(OUTPUT)
    assert cases == {
        "MUL_MAT(type_a=f16,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1)": "OK",
        "MUL_MAT(type_a=q4_0,type_b=f32,m=16,n=9,k=256,bs=[1,1],nr=[1,1],per=[0,1,2,3],k_v=0,o=1)": "FAIL",
        "ABS(type=f16,ne_a=[128,2,2,2],v=0)": "not supported",
    }


def test_parse_gives_a_status_to_the_case_it_ends():
    """Two cases' lines run together (a run cut short mid-line): the status belongs to the
    second case; the first has none, so it counts as not run."""
    line = ("  MUL_MAT(type_a=f16,m=48,n=8,bs=[1,1]):   "
            "MUL_MAT(type_a=f16,m=1000,n=8,bs=[1,1]): \x1b[1;32mOK\x1b[0m\n")
    assert ggml_suite.parse(line) == {"MUL_MAT(type_a=f16,m=1000,n=8,bs=[1,1])": "OK"}


def test_compare_names_what_differs():
    ref = {"cases": {"A(x=1)": "OK", "A(x=2)": "OK", "B(y=1)": "not supported", "B(y=2)": "OK"}}
    got = {"cases": {"A(x=1)": "OK", "A(x=2)": "FAIL", "B(y=1)": "OK"}}
    diff = ggml_suite.compare(ref, got)
    assert diff == {"failed": ["A(x=2)"], "passing_there_not_here": ["A(x=2)"],
                    "supported_differently": ["B(y=1)"], "missing": ["B(y=2)"]}


def test_table_counts_per_operation():
    res = {"path": "coopmat2", "driver": "jitcoop", "seconds": 12.0, "cases": ggml_suite.parse(OUTPUT),
           "ops": {"MUL_MAT": {"seconds": 10.0, "returncode": 1, "cases": 2}}}
    lines = ggml_suite.table([res]).splitlines()
    assert lines[0] == "| operation | coopmat2 on jitcoop |"
    assert "| ABS | 0 / 0 / 1 |" in lines
    assert "| MUL_MAT | 1 / 1 / 0, 10 s |" in lines
    assert lines[-1] == "| all | 1 / 1 / 1, 12 s |"


@pytest.mark.parametrize("path", ggml_suite.PATHS)
def test_h100_reference_is_a_whole_run(path):
    ref = ggml_suite.load(ORACLE / f"h100_{path}.json.gz")
    assert (ref["path"], ref["driver"], ref["returncode"]) == (path, "system", 0)
    assert all(o["returncode"] == 0 for o in ref["ops"].values()), "an operation's run did not end normally"
    statuses = Counter(ref["cases"].values())
    assert statuses["FAIL"] == 0 and statuses["OK"] > 17000, statuses
    per_op = ggml_suite.per_op(ref)
    # every operation that has cases ran on its own, and its run saw all of them
    assert set(per_op) == set(ref["ops"]) and len(per_op) > 110
    assert all(sum(per_op[op].values()) == ref["ops"][op]["cases"] for op in per_op)


def test_each_op_writes_after_each_operation_and_goes_on_where_it_stopped(tmp_path, monkeypatch):
    ran = []

    def fake_run(path, op, regex, driver, cache, timeout, jobs):
        ran.append(op)
        if op == "B" and len(ran) == 2:          # the first time B runs, its run is cut short
            return {"seconds": 2.0, "returncode": -9, "cases": {"B(x=1)": "OK"}, "tail": "killed"}
        return {"seconds": 1.0, "returncode": 0, "cases": {f"{op}(x=1)": "OK", f"{op}(x=2)": "not supported"},
                "tail": ""}
    monkeypatch.setattr(ggml_suite, "run", fake_run)
    out = tmp_path / "r.json.gz"
    first = ggml_suite.run_each_op("scalar", out, ["A", "B"], log=lambda s: None)
    assert ran == ["A", "B"] and first["returncode"] == -9 and first["ops"]["B"]["cases"] == 1
    saved = ggml_suite.load(out)
    assert saved["cases"] == first["cases"] and saved["seconds"] == 3.0
    # an operation whose run was cut is taken out by hand to run it again; the rest is kept
    del saved["ops"]["B"]
    ggml_suite.save(out, saved)
    second = ggml_suite.run_each_op("scalar", out, ["A", "B", "C"], log=lambda s: None)
    assert ran == ["A", "B", "B", "C"]
    assert second["returncode"] == 0 and second["ops"]["B"] == {"seconds": 1.0, "returncode": 0, "cases": 2}
    assert len(second["cases"]) == 6 and second["seconds"] == 3.0
    assert "B" not in second.get("tails", {})          # the cut run's output went with it
    # another path's result is not continued
    other = ggml_suite.run_each_op("coopmat1", out, ["A"], log=lambda s: None)
    assert ran[-1] == "A" and list(other["ops"]) == ["A"]


def test_time_runs_each_driver_cold_then_warm_and_goes_on(tmp_path, monkeypatch):
    """`time` runs each operation through jitcoop then lavapipe, each from an empty cache and
    again on the cache that run left; an operation cut short by the time limit is not written."""
    ran = []

    def fake_run(path, op, regex, driver, cache, timeout, jobs=1):
        entries = list(cache.iterdir())
        ran.append((op, driver, path, len(entries)))
        (cache / f"{op}.entry").write_text("x")
        rc = -9 if op == "C" else 0
        return {"seconds": 2.0 if driver == "jitcoop" else 1.0, "cpu_seconds": 3.0, "returncode": rc,
                "cases": {f"{op}(x=1)": "OK"}, "tail": ""}
    monkeypatch.setattr(ggml_suite, "run", fake_run)
    out = tmp_path / "t.json"
    res = ggml_suite.time_each_op(out, ["A", "B"], log=lambda s: None)
    # jitcoop on coopmat2 cold (empty cache) then warm (the entry it wrote), then lavapipe likewise
    assert ran[:4] == [("A", "jitcoop", "coopmat2", 0), ("A", "jitcoop", "coopmat2", 1),
                       ("A", "lavapipe", "coopmat1", 0), ("A", "lavapipe", "coopmat1", 1)]
    assert res["ops"]["B"]["lavapipe_warm"] == {"seconds": 1.0, "cpu_seconds": 3.0, "returncode": 0,
                                                "statuses": {"OK": 1}}
    ggml_suite.time_each_op(out, ["A", "B", "C", "D"], log=lambda s: None)
    assert [r[0] for r in ran[8:]] == ["C"]                # A and B kept; C cut short, so no D
    saved = ggml_suite.load(out)
    assert sorted(saved["ops"]) == ["A", "B"] and list(saved["partial"]["C"]) == ["jitcoop_cold"]
    lines = ggml_suite.timing_table(ggml_suite.load(out)).splitlines()
    assert lines[2] == "| A | 2.0 | 2.0 | 1.0 | 1.0 | 2.00 |" and lines[-1].startswith("| all 2 | 4 | 4 | 2 | 2 |")


def test_time_runs_jitcoop_again_on_the_cases_lavapipe_runs(tmp_path, monkeypatch):
    """Where lavapipe declines cases that jitcoop runs, jitcoop runs cold and warm again with a -p
    regex that leaves them out, and the table's ratio compares those runs; an operation lavapipe
    runs no case of is not compared."""
    ran = []
    every = {"B(x=1)": "OK", "B(x=2)": "OK", "B(x=[3])": "OK", "B(x=4)": "not supported",
             "D(y=1)": "OK"}

    def fake_run(path, op, regex, driver, cache, timeout, jobs=1):
        import re
        ran.append((op, driver, regex))
        mine = {c: st for c, st in every.items() if c.startswith(op + "(") and re.search(regex, c[c.index("(") + 1:-1])}
        if driver == "lavapipe":
            mine = {c: "not supported" if c in ("B(x=[3])", "D(y=1)") else st for c, st in mine.items()}
        return {"seconds": float(len(mine)), "cpu_seconds": 1.0, "returncode": 0, "cases": mine, "tail": ""}
    monkeypatch.setattr(ggml_suite, "run", fake_run)
    res = ggml_suite.time_each_op(tmp_path / "t.json", ["B", "D"], log=lambda s: None)
    b, d = res["ops"]["B"], res["ops"]["D"]
    assert [r[:2] for r in ran[:6]] == [("B", "jitcoop"), ("B", "jitcoop"), ("B", "lavapipe"), ("B", "lavapipe"),
                                        ("B", "jitcoop"), ("B", "jitcoop")]
    assert ran[4][2] == ran[5][2] == r"^(?!(?:x=\[3\])$)"
    assert b["common"] == 2 and b["jitcoop_common_cold"]["statuses"] == {"OK": 2, "not supported": 1}
    assert b["jitcoop_common_warm"]["excluded"] == 1
    assert d["common"] == 0 and "jitcoop_common_cold" not in d and len(ran) == 10
    lines = ggml_suite.timing_table(res).splitlines()
    assert lines[2] == ("| B | 4.0 | 4.0 | 4.0 | 4.0 | 0.75 (jitcoop common cold 3.0: the 2 cases "
                        "lavapipe runs) |")
    assert lines[3] == "| D | 1.0 | 1.0 | 1.0 | 1.0 | — (lavapipe runs none) |"


def test_excluding_leaves_out_exactly_the_cases_named():
    """The regex matches a case's parameters (Python's re reads it as ECMAScript does) unless
    they are one of the cases named, whatever characters they hold, and keeps the regex given."""
    import re
    named = ["OP(type=f32,ne=[4,2,1,1],v=(1|2)*)", "OP(x=1.5)"]
    rx = ggml_suite.excluding(named, "type=f")
    for params, hit in (("type=f32,ne=[4,2,1,1],v=(1|2)*", False), ("x=1.5", False), ("x=1x5,type=f16", True),
                        ("type=f32,ne=[4,2,1,1],v=(1|2)*,z=0", True), ("type=q4_0", False)):
        assert bool(re.search(rx, params)) is hit, params
    assert bool(re.search(ggml_suite.excluding(named, "^x="), "x=2")) and \
        not re.search(ggml_suite.excluding(named, "^x="), "y=1,x=2")


def _timed(seconds, statuses):
    return {r: {"seconds": seconds, "cpu_seconds": 2 * seconds, "returncode": 0, "statuses": dict(statuses)}
            for r in ("jitcoop_cold", "jitcoop_warm", "lavapipe_cold", "lavapipe_warm")}


def test_time_add_sums_the_shards_of_an_operation_that_cover_it():
    """Shards of one operation timed elsewhere are summed run by run, and only where together they
    hold as many cases as the reference lists; such operations stay out of the table's sums."""
    ref = {"cases": {"A(x=1)": "OK", "A(x=2)": "OK", "A(x=3)": "not supported", "B(x=1)": "OK", "B(x=2)": "OK"}}
    res = {"ops": {"C": _timed(4.0, {"OK": 1})}}
    shards = [{"cores": 2, "ops": {"A": _timed(1.5, {"OK": 2})}},
              {"cores": 2, "ops": {"A": _timed(2.5, {"not supported": 1}), "B": _timed(9.0, {"OK": 1})}}]
    assert ggml_suite.time_add(res, "lent", shards, ref) == ["A"]      # B: 1 case of 2
    a = res["ops"]["A"]
    assert a["lavapipe_warm"] == {"seconds": 4.0, "cpu_seconds": 8.0, "returncode": 0,
                                  "statuses": {"OK": 2, "not supported": 1}}
    assert a["where"] == {"machine": "lent", "shards": 2, "cores per shard": [2]}
    lines = ggml_suite.timing_table(res).splitlines()
    assert lines[-2].startswith("| all 1 | 4 | 4 | 4 | 4 |")
    assert lines[-1] == "| A (in 2 shards of 2 cores: lent) | 4.0 | 4.0 | 4.0 | 4.0 | 1.00 |"


def test_cpu_suite_shards_cover_each_operation_once():
    """tools/h100/cpu_suite.py's -p regexes cut the matrix products and flash attention into
    shards that hold each of the H100's cases exactly once (Python's regexes read these patterns
    as test-backend-ops' ECMAScript ones do), and its other shards hold every other operation."""
    import re
    sys.path.insert(0, str(ROOT / "tools" / "h100"))
    import cpu_suite
    ref = ggml_suite.load(ORACLE / "h100_coopmat2.json.gz")["cases"]
    for op, regexes in (("MUL_MAT", cpu_suite.MUL_MAT), ("FLASH_ATTN_EXT", cpu_suite.FLASH_ATTN),
                        ("MUL_MAT", cpu_suite.TIME_SHARDS["MUL_MAT"]), ("TOP_K", cpu_suite.TIME_SHARDS["TOP_K"]),
                        ("FLASH_ATTN_EXT", [cpu_suite.FLASH_ATTN[i] for i in (0, 1, 2, 4)]
                         + cpu_suite.TIME_SHARDS["FLASH_ATTN_EXT:wide"])):
        cases = [c for c in ref if c.split("(", 1)[0] == op]
        hits = [sum(bool(re.search(r, c[c.index("(") + 1:-1])) for r in regexes) for c in cases]
        assert set(hits) == {1}, op
    bins = cpu_suite.rest_bins()
    rest = [op for b in bins for op in b]
    assert sorted(rest) == sorted({c.split("(", 1)[0] for c in ref} - {"MUL_MAT", "FLASH_ATTN_EXT"})


def test_add_folds_cases_run_elsewhere_into_a_result():
    """`add` puts another machine's shards of a path into its result: the new cases, each
    operation's count and seconds, and how many cases that machine added; a case the result
    holds with another status is an error, not an overwrite."""
    result = {"path": "scalar", "driver": "jitcoop", "seconds": 5.0, "returncode": -9,
              "cases": {"FA(x=1)": "OK", "ABS(t=1)": "OK"},
              "ops": {"FA": {"seconds": 4.0, "returncode": -9, "cases": 1},
                      "ABS": {"seconds": 1.0, "returncode": 0, "cases": 1}}}
    shard = {"path": "scalar", "driver": "jitcoop", "seconds": 7.0, "returncode": 0,
             "cases": {"FA(x=2)": "OK", "FA(x=3)": "not supported"}}
    assert ggml_suite.add(result, "the big machine", [shard]) == 2
    assert result["cases"]["FA(x=3)"] == "not supported" and len(result["cases"]) == 4
    assert result["ops"]["FA"] == {"seconds": 11.0, "returncode": -9, "cases": 3}
    assert result["elsewhere"] == {"the big machine": 2}
    with pytest.raises(ValueError, match="differ"):
        ggml_suite.add(result, "x", [{**shard, "cases": {"FA(x=1)": "FAIL"}}])
    with pytest.raises(ValueError, match="coopmat2"):
        ggml_suite.add(result, "x", [{**shard, "path": "coopmat2"}])
    # a shard of several operations in one run has no seconds per operation to file
    with pytest.raises(ValueError, match="no seconds per operation"):
        ggml_suite.add(result, "x", [{**shard, "cases": {"FA(x=4)": "OK", "ABS(t=2)": "OK"}}])
    assert len(result["cases"]) == 4


def test_cpu_suite_plan_holds_each_missing_case_once(tmp_path, monkeypatch):
    """A plan deals the cases of the H100's reference that the results lack (and only those)
    onto shards of one path each, every shard's names within one command-line argument, and
    leaves for a later plan what does not fit."""
    sys.path.insert(0, str(ROOT / "tools" / "h100"))
    import cpu_suite
    pad = "x" * 280                                     # names as long as flash attention's
    ref = {f"FLASH_ATTN_EXT(i={i},{pad})": "OK" for i in range(2000)} | {"ABS(i=0)": "OK"}
    done = {c: "OK" for c in list(ref)[:300]}

    def load(path):
        return {"cases": ref if "oracle" in str(path) else done}
    monkeypatch.setattr(ggml_suite, "load", load)
    plan = cpu_suite.plan(str(tmp_path / "plan.json"), "3", "scalar:FLASH_ATTN_EXT", "coopmat2:FLASH_ATTN_EXT")
    assert plan == __import__("json").loads((tmp_path / "plan.json").read_text())
    want = {c for c in ref if c.startswith("FLASH_ATTN_EXT(") and c not in done}
    for path in ("scalar", "coopmat2"):
        shards = [cases for p, _, cases in plan if p == path]
        got = [c for cases in shards for c in cases]
        assert len(shards) == 3 and len(got) == len(set(got)) and set(got) <= want
        # 1,700 names of 300 bytes are more than three arguments hold: each shard is full
        assert all(len(",".join(c)) > cpu_suite._ARG_BYTES - 400 for c in shards)
    assert all(len(",".join(cases)) <= cpu_suite._ARG_BYTES for _, _, cases in plan)


def test_results_table_sets_each_path_beside_the_h100():
    ref = {"cases": {"A(x=1)": "OK", "A(x=2)": "not supported", "B(y=1)": "OK"}}
    full = {"path": "scalar", "cases": {"A(x=1)": "OK", "A(x=2)": "not supported", "B(y=1)": "OK"},
            "ops": {"A": {"seconds": 7.0}, "B": {"seconds": 3600.0}}}
    part = {"path": "coopmat2", "cases": {"A(x=1)": "FAIL"}, "ops": {}}
    lines = ggml_suite.results_table(ref, [part, full]).splitlines()
    assert lines[0] == "| operation | cases | H100, each path: passed / not supported | jitcoop coopmat2 | jitcoop scalar |"
    assert lines[2] == "| A | 2 | 1 / 1 | 0 / 1 / 0 (1 of 2 run) | 1 / 0 / 1, 7 s |"
    assert lines[3] == "| B | 1 | 1 / 0 | — | 1 / 0 / 0, 3600 s |"
    assert lines[4] == "| **all** | 3 | 2 / 1 | 0 / 1 / 0 (1 of 3 run), 0.0 h | 2 / 0 / 1, 1.0 h |"


def test_cpu_suite_time_pins_each_shard_to_cores_of_its_own(tmp_path, monkeypatch):
    """`cpu_suite.py time` starts one `ggml_suite.py time` per shard of each operation (TOP_K's 4
    regexes, one shard for an operation it does not cut), each under `taskset` on cores no other
    shard has, with OpenMP's threads as many as its cores; more shards than cores is refused."""
    sys.path.insert(0, str(ROOT / "tools" / "h100"))
    import cpu_suite
    started = []

    class Popen:
        def __init__(self, cmd, **kw):
            started.append((cmd, kw["env"]["OMP_NUM_THREADS"]))
    monkeypatch.setattr(cpu_suite.subprocess, "Popen", Popen)
    monkeypatch.setattr(cpu_suite, "SHARDS", tmp_path)
    monkeypatch.setattr(cpu_suite.os, "sched_getaffinity", lambda pid: set(range(3, 15)))
    cpu_suite.start_time(100.0, "2", "TOP_K", "ABS")
    cores = [cmd[2] for cmd, _ in started]
    assert [cmd[:2] for cmd, _ in started] == [["taskset", "-c"]] * 5
    assert cores == ["3,4", "5,6", "7,8", "9,10", "11,12"]
    assert [cmd[cmd.index("-p") + 1] if "-p" in cmd else None for cmd, _ in started] == \
        cpu_suite.TIME_SHARDS["TOP_K"] + [None]
    assert {omp for _, omp in started} == {"2"}
    with pytest.raises(SystemExit, match="need 16"):
        cpu_suite.start_time(100.0, "2", "MUL_MAT")
    started.clear()
    cpu_suite.start_time(100.0, "1", "FLASH_ATTN_EXT:wide")
    assert [cmd[cmd.index("-o") + 1] for cmd, _ in started] == ["FLASH_ATTN_EXT"] * 8
    assert [Path(cmd[cmd.index("time") + 1]).name for cmd, _ in started][:2] == \
        ["time_FLASH_ATTN_EXT_wide_0.json", "time_FLASH_ATTN_EXT_wide_1.json"]


def test_a_jitcoop_run_has_the_package_bytecode_an_install_has(tmp_path, monkeypatch):
    """The environment of a run through jitcoop's driver comes with jitcoop's modules' bytecode
    compiled (pip compiles it at install; without it every driver process compiles the sources
    again), whatever PYTHONDONTWRITEBYTECODE says."""
    import importlib.util
    import shutil
    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "jitcoop" / "icd", pkg, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    ggml_suite._bytecode(pkg)
    for src in (pkg / "queue.py", pkg / "commands.py"):
        assert Path(importlib.util.cache_from_source(str(src))).exists()
