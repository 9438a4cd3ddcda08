"""The command line: run (npy and raw buffers, set.binding keys, --out), info, dis, example, errors."""
import json
import struct

import numpy as np
import pytest

from jitcoop.cli import main
from jitcoop.examples import path

SAXPY = str(path("saxpy"))


def test_run_npy_in_place(tmp_path, capsys):
    x = np.arange(300, dtype=np.float32)
    y = np.full(300, 0.5, np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    (tmp_path / "p.bin").write_bytes(struct.pack("<fI", 3.0, 300))
    rc = main(["run", SAXPY, "--grid", "2", "--buffer", f"0={tmp_path / 'x.npy'}",
               "--buffer", f"0.1={tmp_path / 'y.npy'}", "--push", str(tmp_path / "p.bin")])
    assert rc == 0
    assert "workgroups" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.float32(3.0) * x + np.float32(0.5))
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), x)


def test_run_raw_bin_to_out_dir(tmp_path):
    x = np.arange(256, dtype=np.float32)
    y = np.ones(256, np.float32)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    out = tmp_path / "out"
    rc = main(["run", SAXPY, "--grid", "1,1,1", "--buffer", f"0={tmp_path / 'x.bin'}",
               "--buffer", f"1={tmp_path / 'y.bin'}", "--push-values", "f32:2,u32:256", "--out", str(out)])
    assert rc == 0
    np.testing.assert_array_equal(np.fromfile(out / "y.bin", np.float32), 2 * x + 1)
    np.testing.assert_array_equal(np.fromfile(tmp_path / "y.bin", np.float32), y)   # input untouched


def test_info_and_json(capsys):
    assert main(["info", SAXPY]) == 0
    text = capsys.readouterr().out
    assert "local size (256, 1, 1)" in text and "push constants" in text
    assert main(["info", SAXPY, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["entry_points"][0]["local_size"] == [256, 1, 1]
    assert [(b["set"], b["binding"]) for b in d["bindings"]] == [(0, 0), (0, 1)]
    assert d["push_constants"]["size"] == 8


def test_dis(capsys):
    assert main(["dis", SAXPY]) == 0
    out = capsys.readouterr().out
    assert "OpEntryPoint GLCompute" in out and "OpFunctionEnd" in out


def test_example(capsys):
    assert main(["example", "--n", "128"]) == 0
    assert "PASS" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["run", "missing.spv", "--grid", "1"], "no such SPIR-V file"),
    (["run", SAXPY, "--grid", "1", "--buffer", "0=missing.npy"], "no such buffer file"),
])
def test_errors_are_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("jitcoop: error:") and words in err and err.count("\n") == 1


def test_missing_binding_is_a_clear_error(tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros(4, np.float32))
    rc = main(["run", SAXPY, "--grid", "1", "--buffer", f"0={tmp_path / 'x.npy'}", "--push-values", "f32:1,u32:4"])
    assert rc == 2
    assert "binding 1" in capsys.readouterr().err
