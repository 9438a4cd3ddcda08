"""ggml's own GPU test suite through jitcoop's Vulkan driver, on ggml's three matrix paths.

test-backend-ops checks each ggml operation on the Vulkan device against ggml's CPU backend: the
reference is ggml's own. A sample of every operation family whose shaders differ between the
paths (matrix products with float and quantized weights, expert routing, flash attention) and
a few element-wise ones runs on each path; every case must pass or be "not supported", the run
must end normally (no abort), and where the H100's own run of the suite is recorded
(tests/oracle/ggml/h100_PATH.json.gz, tools/ggml_suite.py) the cases ggml runs there must pass here
too, and "not supported" must be the same. Slow (minutes per path with an empty cache); skipped
when ../shared/tools/get-ggml's files are absent.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import ggml_suite  # noqa: E402

ORACLE = Path(__file__).resolve().parent / "oracle" / "ggml"

# (ops, params regex): each keeps the distinct shader variants of its family on few sizes
SAMPLE = [
    ("MUL_MAT", r"type_a=(f16|q4_0|q8_0|q4_K),type_b=f32,m=16,n=(1|9),k=256"),
    ("MUL_MAT", r"type_a=f16,type_b=f32,m=83,n=2,k=128"),          # a result tile at an unaligned offset
    ("MUL_MAT_ID", r"type_a=(f16|q4_0),type_b=f32,n_mats=4,n_used=2,b=0,m=512,n=(1|32),k=256"),
    ("FLASH_ATTN_EXT", r"hsk=64,hsv=64,nh=4,nr23=\[1,1\],kv=512,nb=(1|8),.*type_K=(f16|q8_0),"),
    ("ADD,MUL,RMS_NORM", r"type=f32,ne=\[(10|64),5,4,3\]"),
    ("SOFT_MAX", r"type=f32,ne=\[16,16,1,1\]"),
    ("ROPE", r"type=f32,ne_a=\[128,32,2,1\],n_dims=128,mode=0,"),
]

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(ggml_suite.ggml_dir() is None,
                                 reason="ggml's test programs are not installed (../shared/tools/get-ggml)")]


@pytest.mark.parametrize("path", ggml_suite.PATHS)
def test_ggml_sample(path, tmp_path):
    cases = {}
    for ops, regex in SAMPLE:
        res = ggml_suite.run(path, ops, regex, cache=tmp_path / "cache", timeout=1800)
        assert res["returncode"] == 0, f"{ops} -p {regex!r} ended with {res['returncode']}:\n{res['tail']}"
        assert res["cases"], f"{ops} -p {regex!r} ran no case:\n{res['tail']}"
        cases.update(res["cases"])
    failed = sorted(c for c, s in cases.items() if s == "FAIL")
    assert not failed, failed
    ref = ggml_suite.load(ORACLE / f"h100_{path}.json.gz")
    assert not set(cases) - set(ref["cases"]), "cases the H100's run of the suite does not have"
    diff = ggml_suite.compare(ref, {"cases": cases})
    assert not diff["passing_there_not_here"], diff["passing_there_not_here"]
    assert not diff["supported_differently"], diff["supported_differently"]
