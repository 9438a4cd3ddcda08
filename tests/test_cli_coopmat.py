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


def test_run_numerics_option(tmp_path):
    """`jitcoop run --numerics`: 1 + 2^-24 + 2^-24 is 1 + 2^-23 summed exactly (the default) and
    1 in float32 sums (each add a tie, to even)."""
    spv = HERE / "shaders" / "coopmat" / "muladd_f16_f32.spv"
    a = np.zeros((16, 16), np.float16)
    b = np.zeros((16, 16), np.float16)
    c = np.zeros((16, 16), np.float32)
    c[0, 0] = 1.0
    a[0, 0] = a[0, 1] = b[0, 0] = b[1, 0] = 2.0 ** -12
    got = {}
    for numerics in ("exact", "float32"):
        files = []
        for i, x in enumerate((a, b, c, np.zeros((16, 16), np.float32))):
            f = tmp_path / f"{numerics}{i}.npy"
            np.save(f, x)
            files += ["--buffer", f"{i}={f}"]
        assert main(["run", str(spv), "--grid", "1", "--spec", "10=32", *files,
                     "--push-values", "u32:16,u32:16,u32:16,u32:16", "--numerics", numerics]) == 0
        got[numerics] = np.load(tmp_path / f"{numerics}3.npy")[0, 0]
    assert got == {"exact": np.float32(1 + 2.0 ** -23), "float32": np.float32(1.0)}
