"""The rules' index (jitcoop/codegen/rules/supported.py), which Module load checks a module's
instructions against without importing the code generator, names exactly what the registry
registers. (An instruction without a rule refused at load: tests/test_core_errors.py.)"""
import os
import subprocess
import sys

from jitcoop.codegen.rules import index


def test_index_is_the_registry():
    """Fails when a rule was added or removed without `python3 -m jitcoop.codegen.rules.index`."""
    written = (index.HERE / "supported.py").read_text()
    assert written == index.index_text(), "run `python3 -m jitcoop.codegen.rules.index` to write supported.py again"


def test_load_does_not_import_the_code_generator(shaders, tmp_path):
    """A module is checked at load without the rule modules (they import the whole code
    generator); they are imported once a kernel is compiled."""
    code = (f"import sys, jitcoop\n"
            f"m = jitcoop.Device().load({str(shaders / 'atomics.spv')!r})\n"
            f"print('jitcoop.codegen.emitter' in sys.modules)\n"
            f"m.kernel(tier='fast', compile_timeout=0)\n"
            f"print('jitcoop.codegen.emitter' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, JITCOOP_CACHE_DIR=str(tmp_path)))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]
