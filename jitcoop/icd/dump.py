"""JITCOOP_ICD_DUMP=DIR: every compute pipeline an application creates, written down so that it
can be run, profiled and reported without the application.

Each shader module's SPIR-V is written once as `DIR/<module hash>.spv`; each pipeline as
`DIR/<pipeline hash>.json`: the module's file name, the entry point, the specialization
constants as the application gave them (SpecId -> the value's bytes, in hex), the subgroup size,
the device profile and the pipeline's kernel options. A pipeline is written when it is created,
before it is compiled, so one that fails to compile or to run is there too. `kernel(PATH)` makes
the pipeline's kernel through the Python API:

    k = jitcoop.icd.dump.kernel("dump/3f2a....json")      # then k.dispatch(...), k.source, ...
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

_unwritable: set = set()


def write(folder: str, code: bytes, module_key: str, entry: str, spec: dict, subgroup_size: int,
          profile: str, options: dict) -> Path | None:
    """Write one pipeline's description (and its module, if not there yet); None, with one
    message on stderr per folder, where the folder cannot be written: the application goes on."""
    d = Path(folder)
    desc = {"module": f"{module_key[:24]}.spv", "entry": entry, "subgroup_size": subgroup_size, "profile": profile,
            "spec": {str(k): bytes(v).hex() for k, v in sorted(spec.items())}, "options": dict(sorted(options.items()))}
    text = json.dumps(desc, indent=1)
    path = d / f"{hashlib.sha256(text.encode()).hexdigest()[:24]}.json"
    try:
        d.mkdir(parents=True, exist_ok=True)
        spv = d / desc["module"]
        if not spv.exists():
            _atomically(spv, code)
        if not path.exists():
            _atomically(path, text.encode())
    except OSError as e:
        if folder not in _unwritable:
            _unwritable.add(folder)
            print(f"jitcoop: JITCOOP_ICD_DUMP={folder}: pipelines are not written ({e.strerror or e})", file=sys.stderr)
        return None
    return path


def _atomically(path: Path, data: bytes):
    # several processes of one test suite may dump into one folder
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def kernel(path, **options):
    """The kernel of a dumped pipeline (its options, updated by `options`)."""
    import jitcoop
    path = Path(path)
    desc = json.loads(path.read_text())
    module = jitcoop.Device(desc["profile"], desc["subgroup_size"]).load(path.with_name(desc["module"]))
    spec = {int(k): bytes.fromhex(v) for k, v in desc["spec"].items()}
    return module.kernel(desc["entry"], spec=spec, **{**desc["options"], **options})
