"""Shared test setup: a persistent kernel cache (numba compiles once per shader across runs) and
the folder of committed test shaders (GLSL beside its compiled .spv)."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("JITCOOP_CACHE_DIR", str(ROOT / ".pytest_cache" / "jitcoop"))

import pytest  # noqa: E402

SHADERS = Path(__file__).resolve().parent / "shaders"


@pytest.fixture(scope="session")
def shaders():
    return SHADERS
