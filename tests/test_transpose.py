"""The register transpose of column-major loads and stores (codegen/matrix_loads.transpose_rounds)
against shufflevector's definition, evaluated here: for every block side and slot type the
code generator may take, result j holds element j of every input vector, in input order."""
import re

import pytest

from jitcoop.codegen.matrix_loads import transpose_rounds

_LINE = re.compile(r"\s*(%\S+) = shufflevector <(\d+) x (\S+)> (%\S+), <\d+ x \S+> (%\S+), "
                   r"<\d+ x i32> <(.*)>$")


def _evaluate(lines, env):
    """Runs the shufflevector lines over env (name -> list of values): element i of the result
    is element mask[i] of the two operands' concatenation."""
    for ln in lines:
        m = _LINE.match(ln)
        assert m, ln
        out, n, _, a, b, mask = m.groups()
        both = env[a] + env[b]
        env[out] = [both[int(x.split()[1])] for x in mask.split(",")]
        assert len(env[out]) == int(n)
    return env


@pytest.mark.parametrize("slot,B", [("i8", 16), ("i8", 32), ("i16", 8), ("i16", 16), ("float", 4),
                                    ("float", 8), ("float", 16), ("double", 4), ("double", 8)])
def test_transpose_rounds_transposes(slot, B):
    names = [f"%in{i}" for i in range(B)]
    count = [0]

    def fresh():
        count[0] += 1
        return f"%t{count[0]}"
    lines, out = transpose_rounds(B, f"<{B} x {slot}>", names, fresh)
    env = _evaluate(lines, {n: [(i, e) for e in range(B)] for i, n in enumerate(names)})
    for j, name in enumerate(out):
        assert env[name] == [(i, j) for i in range(B)], (j, env[name])
    # log2(B) rounds of B shuffles: one x86 instruction each where they stay in 16-byte lanes
    assert len(lines) == B * (B.bit_length() - 1)
