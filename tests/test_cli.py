"""The command line: run (npy and raw buffers, set.binding keys, --out, spec constants, push values),
info (text and JSON), dis, example, and errors as one line with exit status 2.

The kernel cache is JITCOOP_CACHE_DIR when the environment sets it (tests/conftest.py gives a
default), so the SGEMM compiles once across runs.
"""
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jitcoop.cli import main, push_values
from jitcoop.examples import path, run_sgemm, sgemm_push

SAXPY = str(path("saxpy"))
SGEMM = str(path("sgemm"))
SHADERS = Path(__file__).resolve().parent / "shaders" / "asm"


def _err_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("jitcoop: error: "), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


# -- run --------------------------------------------------------------------------------------------
def test_run_npy_in_place_with_set_binding_and_spec(tmp_path, capsys):
    x = np.arange(300, dtype=np.float32)
    y = np.full(300, 0.5, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    (tmp_path / "p.bin").write_bytes(struct.pack("<fI", 3.0, 300))
    before = (tmp_path / "x.npy").stat().st_mtime_ns
    rc = main(["run", SAXPY, "--grid", "3", "--spec", "0=128", "--buffer", f"0={tmp_path / 'x.npy'}",
               "--buffer", f"0.1={tmp_path / 'y.npy'}", "--push", str(tmp_path / "p.bin"), "--threads", "2"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "local size (128, 1, 1)" in out and "workgroups in" in out and "ms" in out
    got = np.load(tmp_path / "y.npy")
    assert got.dtype == np.float32 and got.shape == (300,)
    np.testing.assert_array_equal(got, np.float32(3.0) * x + np.float32(0.5))
    # A read-only binding's file is left alone.
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), x)
    assert (tmp_path / "x.npy").stat().st_mtime_ns == before


def test_run_raw_bin_to_out_dir(tmp_path, capsys):
    x = np.arange(256, dtype=np.float32)
    y = np.ones(256, np.float32)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.dat")
    out = tmp_path / "out"
    rc = main(["run", SAXPY, "--grid", "4,1,1", "--buffer", f"0={tmp_path / 'x.bin'}",
               "--buffer", f"1={tmp_path / 'y.dat'}", "--push-values", "f32:2,u32:256", "--out", str(out)])
    assert rc == 0
    np.testing.assert_array_equal(np.fromfile(out / "y.dat", np.float32), 2 * x + 1)
    np.testing.assert_array_equal(np.fromfile(out / "x.bin", np.float32), x)    # every buffer in --out
    np.testing.assert_array_equal(np.fromfile(tmp_path / "y.dat", np.float32), y)   # input untouched
    assert "wrote" in capsys.readouterr().out


def test_run_sgemm_2d_grid(tmp_path):
    m, n, k = 20, 33, 17
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    for name, arr in (("a", a), ("b", b), ("c", np.zeros((m, n), np.float32))):
        np.save(tmp_path / f"{name}.npy", arr)
    (tmp_path / "p.bin").write_bytes(sgemm_push(m, n, k))
    rc = main(["run", SGEMM, "--grid", "3,2", "--buffer", f"0.0={tmp_path / 'a.npy'}",
               "--buffer", f"0.1={tmp_path / 'b.npy'}", "--buffer", f"0.2={tmp_path / 'c.npy'}",
               "--push", str(tmp_path / "p.bin")])
    assert rc == 0
    c = np.load(tmp_path / "c.npy")
    assert c.shape == (m, n)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_push_values_packing():
    assert push_values("f32:1.5,u32:7") == struct.pack("<fI", 1.5, 7)
    assert push_values("i8:-1,u16:0x10,bool:true,f64:2") == struct.pack("<bHId", -1, 16, 1, 2.0)


# -- info / dis -----------------------------------------------------------------------------------
def test_info_text_and_json(capsys):
    assert main(["info", SAXPY]) == 0
    text = capsys.readouterr().out
    assert "local size (64, 1, 1) (x = spec 0)" in text
    assert "push constants" in text and "set 0 binding 1: Y" in text
    assert main(["info", SAXPY, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    ep = d["entry_points"][0]
    assert ep["local_size"] == [64, 1, 1] and ep["local_size_spec_ids"] == [0, None, None]
    assert [(b["set"], b["binding"], b["readonly"]) for b in d["bindings"]] == [(0, 0, True), (0, 1, False)]
    assert d["bindings"][1]["members"][0] == {"name": "y", "offset": 0, "type": "f32[]", "size": 0,
                                              "array_stride": 4}
    assert d["push_constants"]["size"] == 8
    assert [m["name"] for m in d["push_constants"]["members"]] == ["a", "n"]
    assert d["spec_constants"][0]["spec_id"] == 0 and d["spec_constants"][0]["default"] == 64
    assert d["spec_constants"][0]["used_for"] == ["local_size_x"]


def test_info_sgemm_workgroup_memory(capsys):
    assert main(["info", SGEMM, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["workgroup_memory"]["bytes"] == 2 * 16 * 16 * 4
    assert d["entry_points"][0]["workgroup_memory_bytes"] == 2048
    assert d["push_constants"]["members"][3] == {"name": "alpha", "offset": 12, "type": "f32", "size": 4}


def test_info_cooperative_types(capsys):
    # These modules use capabilities the engine does not run yet; info still reads them.
    assert main(["info", str(SHADERS / "coopmat_khr.spv"), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    coop = {(c["component_type"], c["rows"], c["columns"], c["use"]) for c in d["cooperative_types"]}
    assert ("f16", 16, 16, "MatrixAKHR") in coop and ("i8", 32, 16, "MatrixBKHR") in coop
    assert all(c["scope"] == "Subgroup" for c in d["cooperative_types"])
    assert main(["info", str(SHADERS / "coopmat2_nv.spv")]) == 0
    text = capsys.readouterr().out
    assert "tensorLayoutNV<2, Constant>" in text and "tensorViewNV<2, false, 1, 0>" in text
    assert main(["info", str(SHADERS / "coopvec_nv.spv")]) == 0
    assert "coopvecNV<f16, 16>" in capsys.readouterr().out


def test_dis(capsys):
    assert main(["dis", SAXPY]) == 0
    out = capsys.readouterr().out
    assert "OpEntryPoint GLCompute" in out and "OpFunctionEnd" in out


# -- example ----------------------------------------------------------------------------------------
def test_example(capsys):
    assert main(["example", "--n", "64"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "ms" in out


def test_run_sgemm_odd_sizes_with_beta():
    ok, report, err = run_sgemm(40, seed=3, m=23, k=29, alpha=0.5, beta=2.0)
    assert ok, err
    assert report.workgroups == 3 * 2 and report.extra["shape"] == (23, 40, 29)


def test_python_dash_m(tmp_path):
    r = subprocess.run([sys.executable, "-m", "jitcoop", "info", SAXPY], capture_output=True, text=True)
    assert r.returncode == 0 and "GLCompute" in r.stdout
    r = subprocess.run([sys.executable, "-m", "jitcoop", "info", str(tmp_path / "nope.spv")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("jitcoop: error: ") and "Traceback" not in r.stderr


# -- errors -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, words", [
    (["run", "missing.spv", "--grid", "1"], "no such SPIR-V file"),
    (["run", SAXPY, "--grid", "1", "--buffer", "0=missing.npy"], "no such buffer file"),
    (["run", SAXPY, "--grid", "1", "--push", "missing.bin"], "no such push constant file"),
    (["info", "missing.spv"], "no such SPIR-V file"),
    (["dis", "missing.spv"], "no such SPIR-V file"),
    (["run", SAXPY, "--grid", "1", "--spec", "5=1"], "unknown spec id 5"),
    (["run", SAXPY, "--grid", "1", "--entry", "nope"], "no GLCompute entry point named 'nope'"),
])
def test_errors_are_one_line(argv, words, capsys):
    assert main(argv) == 2
    assert words in _err_line(capsys)


def test_missing_binding(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros(4, np.float32))
    rc = main(["run", SAXPY, "--grid", "1", "--buffer", f"0={tmp_path / 'x.npy'}",
               "--push-values", "f32:1,u32:4"])
    assert rc == 2
    assert "binding 1" in _err_line(capsys)


def test_unused_binding_and_short_push(tmp_path, capsys):
    for name in ("x", "y"):
        np.save(tmp_path / f"{name}.npy", np.zeros(4, np.float32))
    bufs = ["--buffer", f"0={tmp_path / 'x.npy'}", "--buffer", f"1={tmp_path / 'y.npy'}"]
    assert main(["run", SAXPY, "--grid", "1", *bufs, "--buffer", f"2.0={tmp_path / 'x.npy'}",
                 "--push-values", "f32:1,u32:4"]) == 2
    assert "set 2, binding 0" in _err_line(capsys)
    assert main(["run", SAXPY, "--grid", "1", *bufs, "--push-values", "f32:1"]) == 2
    assert "push constants are 4 bytes" in _err_line(capsys)


def test_not_spirv_and_bad_npy(tmp_path, capsys):
    (tmp_path / "junk.spv").write_bytes(b"\x00\x01\x02\x03garbage")
    assert main(["info", str(tmp_path / "junk.spv")]) == 2
    assert "neither SPIR-V" in _err_line(capsys)
    (tmp_path / "bad.npy").write_bytes(b"not an npy file")
    assert main(["run", SAXPY, "--grid", "1", "--buffer", f"0={tmp_path / 'bad.npy'}"]) == 2
    assert "bad.npy" in _err_line(capsys)


def test_usage_errors_return_2(capsys):
    assert main(["run", SAXPY, "--grid", "a,b"]) == 2
    assert main(["run", SAXPY, "--grid", "1", "--buffer", "x=y.npy"]) == 2
    assert main(["run", SAXPY, "--grid", "1", "--push-values", "f32:abc"]) == 2
    assert "usage:" in capsys.readouterr().err


def test_dis_generated_is_the_llvm_ir_that_runs(capsys):
    """`dis --generated` prints the kernel's LLVM IR: it parses, every SPIR-V instruction of the
    entry point is named in a comment before its code, and --optimized gives LLVM's output."""
    import llvmlite.binding as llvm
    from jitcoop.runtime import jit
    shader = str(SHADERS.parents[2] / "benchmarks" / "shaders" / "saxpy.spv")
    assert main(["dis", "--generated", shader]) == 0
    ir = capsys.readouterr().out
    jit.compile_ir(ir, 0)                       # the text LLVM compiles, as printed
    # (%16, a load of the local `gid`, is %15 itself once locals are SSA values: analysis/ssa.py)
    assert "; %27 = OpULessThan %15 %25" in ir and "icmp ult i32" in ir
    assert main(["dis", "--generated", "--optimized", shader]) == 0
    opt = capsys.readouterr().out
    assert "; %27 = OpULessThan" not in opt and "@kernel(" in opt
    llvm.parse_assembly(opt).verify()


def test_build_library_fills_the_cache(tmp_path, monkeypatch, capsys):
    """`build-library` compiles the given shaders' kernels into JITCOOP_CACHE_DIR; a later
    kernel() of the same shader comes from there."""
    import jitcoop
    from jitcoop.runtime import compile as C
    monkeypatch.setenv("JITCOOP_CACHE_DIR", str(tmp_path))
    C._memo.clear()                             # a kernel another test compiled is not on this disk
    shader = SHADERS.parents[2] / "benchmarks" / "shaders" / "saxpy.spv"
    assert main(["build-library", str(shader), "--profiles", "generic"]) == 0
    assert "1 kernels compiled" in capsys.readouterr().out
    assert len(list(tmp_path.glob("k_*.entry"))) == 1
    C._memo.clear()                             # as a new process: nothing in memory
    assert jitcoop.Device().load(shader).kernel().cache_hit
