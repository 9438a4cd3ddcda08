"""The quickstart notebook runs top to bottom (its cells carry their own numpy checks)."""
import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "quickstart.ipynb"


def test_quickstart_notebook_runs(capsys):
    nb = json.loads(NOTEBOOK.read_text())
    ns = {}
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), str(NOTEBOOK), "exec"), ns)
    out = capsys.readouterr().out
    assert "def kernel" in out and "OpLoad" in out and "workgroup (4, 0, 0)" in out
