"""The LLVM jitcoop compiles with (jitcoop.runtime.jit.MIN_LLVM): llvmlite 0.44's LLVM 15 does not
parse the generated IR (opaque pointers: `error: expected type` on `declare ptr @malloc(i64)`),
so an llvmlite that old is refused with what to install, before any module is parsed, and the
package's dependencies ask for one new enough."""
import re
from pathlib import Path

import pytest

from jitcoop.runtime import jit

ROOT = Path(__file__).resolve().parents[1]


def test_an_llvm_too_old_for_the_generated_ir_is_named():
    with pytest.raises(ImportError, match=re.escape("this is llvmlite 0.44.0 with LLVM 15.0.7: "
                                                    "pip install -U 'llvmlite>=0.45' 'numba>=0.62'")):
        jit.require_llvm((15, 0, 7), "0.44.0")
    jit.require_llvm((20, 1, 8), "0.45.1")


def test_the_dependencies_ask_for_that_llvm():
    deps = re.search(r"^dependencies = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.M | re.S).group(1)
    assert '"llvmlite>=0.45"' in deps and '"numba>=0.62"' in deps
