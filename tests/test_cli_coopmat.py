"""`jitcoop check`, `jitcoop devices` and `jitcoop run --profiles` on cooperative matrix shaders."""
from pathlib import Path

import numpy as np

from jitcoop.cli import main

HERE = Path(__file__).resolve().parent
GEMM = HERE.parent / "benchmarks" / "shaders" / "gemm_coopmat_f16.spv"
LANE_IDS = HERE / "shaders" / "coopmat_cli" / "lane_ids.spv"


def test_devices_lists_every_profile(capsys):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    for name in ("generic", "nvidia", "lavapipe", "amd-rdna3", "shuffled"):
        assert name in out


def test_check_supported_on_nvidia(capsys):
    assert main(["check", str(GEMM), "--device", "nvidia"]) == 0
    out = capsys.readouterr().out
    assert "muladd  16x16x16 f16 x f16 + f32 -> f32 (subgroup)  (x4)" in out
    assert "0 not supported" in out


def test_check_rejects_and_says_why(capsys):
    # A 32-invocation workgroup cannot hold subgroup-scope matrices on wave64 RDNA3.
    assert main(["check", str(LANE_IDS), "--device", "amd-rdna3"]) == 1
    out = capsys.readouterr().out
    assert "NO  type    coopmat<f32, Subgroup, 16x16, Accumulator>" in out
    assert "a workgroup of 32 invocations is not a multiple of the subgroup size 64" in out
    # lavapipe's KHR table is 8x8x8 only, but its flexible-dimension table (granularity 8) takes
    # the GEMM's 16x16x16 f16 -> f32 MulAdds.
    assert main(["check", str(GEMM), "--device", "lavapipe"]) == 0


def test_run_profiles_shows_layout_dependence(tmp_path, capsys):
    o = tmp_path / "o.npy"
    np.save(o, np.zeros(256, np.float32))
    rc = main(["run", str(LANE_IDS), "--grid", "1", "--buffer", f"0={o}",
               "--profiles", "generic,nvidia,shuffled"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "elements differ between generic and nvidia" in out
    assert "elements differ between generic and shuffled" in out
    # Nothing is written back by a comparison run.
    assert not np.load(o).any()


def test_check_reports_cooperative_vector_combinations(capsys):
    # The H100 lists no float32 result for cooperative vector products (oracle/props-h100.txt).
    spv = HERE / "shaders" / "coopvec" / "mm_f32.spv"
    assert main(["check", str(spv), "--device", "nvidia"]) == 1
    out = capsys.readouterr().out
    assert "NO  coopvec" in out and "'f32', False)" in out
    assert main(["check", str(spv), "--device", "generic"]) == 0
