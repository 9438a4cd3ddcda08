"""Where compiled kernels and kernel-library objects are kept: `JITCOOP_CACHE_DIR`, else the user
cache folder (`$XDG_CACHE_HOME/jitcoop` or `~/.cache/jitcoop`). Keep this folder between CI runs
(cache it like pip's) and kernels load from it in milliseconds instead of compiling."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    d = os.environ.get("JITCOOP_CACHE_DIR")
    if d:
        p = Path(d)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        p = Path(base) / "jitcoop"
    p.mkdir(parents=True, exist_ok=True)
    return p


def write_atomically(path: Path, data: bytes):
    """Write a cache file so that concurrent processes never read half of it (a temporary file
    beside it, then renamed over it)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
