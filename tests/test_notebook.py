"""The notebooks run top to bottom in a real notebook kernel (nbclient + ipykernel), as a user
would run them; each checks its own results against numpy in its cells (an assert that fails
fails the notebook). They compile a few small shaders each: about 10 to 30 s on a cold cache."""
import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _run(name):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    env = {"JITCOOP_PROGRESS": "0"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)                   # the kernel inherits this process's environment
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def _text(nb):
    return "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def _images(nb):
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_quickstart():
    nb = _run("quickstart")
    out = _text(nb)
    assert "a (also MatA): f32[]" in out and "workgroups in" in out
    assert "has no binding named" not in out and "holds bfloat16 elements" in out
    assert "missing member(s) 'n'" in out and "workgroup" in out


def test_cooperative_matrices():
    nb = _run("cooperative_matrices")
    out = _text(nb)
    assert "the formula holds for all 256 fragment elements" in out
    assert "nvidia matches numpy" in out and "shuffled matches numpy" in out
    assert _images(nb) == 2                   # the lane layouts and the tensor load, as PNG


def test_decode_variants():
    nb = _run("decode_variants")
    out = _text(nb)
    assert "Q4_0: matches numpy" in out and "Q8_0: matches numpy" in out
    assert "DecodeFunc / scalar" in out
    assert _images(nb) == 2                   # the profile comparison and the timings
