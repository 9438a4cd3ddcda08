"""Fuzzing jitcoop's load, compile and dispatch (issue 21): `python3 -m tests.fuzz --help`."""
import sys
from pathlib import Path

# The dispatch recipes and the editable module model come from tests/metamorphic, imported as
# `metamorphic` (as the tests import it) whether this package runs as `tests.fuzz` or `fuzz`.
_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
