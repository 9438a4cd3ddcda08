"""What every analysis of one entry point reads: the module, its specialization, the flat function
and the kernel options, with the lookups they all need (types of values, users, predecessors)."""
from __future__ import annotations

from functools import cached_property

from ..errors import SpirvError
from ..spirv.module import Module
from ..spirv.specialize import Specialization
from ..spirv.types import Type
from .flatten import FlatFunction


class Context:
    def __init__(self, m: Module, spec: Specialization, ff: FlatFunction, options):
        self.m, self.spec, self.ff, self.options = m, spec, ff, options

    def value_type(self, vid: int) -> Type:
        if vid in self.ff.type_of:
            return self.spec.type(self.ff.type_of[vid])
        ins = self.spec.def_of(vid)
        if ins is None or ins.result_type is None:
            raise SpirvError(f"%{vid} is used as a value but is not one")
        return self.spec.type(ins.result_type)

    def rtype(self, ins) -> Type:
        return self.spec.type(ins.result_type)

    @cached_property
    def users(self) -> dict:
        """id -> the instructions (terminators included) that use it."""
        return self.ff.users()

    @cached_property
    def bmap(self) -> dict:
        return self.ff.block_map()

    @cached_property
    def preds(self) -> dict:
        """label -> the labels of its predecessors (each once)."""
        out: dict = {}
        for b in self.ff.blocks:
            for t in dict.fromkeys(b.succs()):
                out.setdefault(t, []).append(b.label)
        return out

    @property
    def entry(self) -> int:
        return self.ff.blocks[0].label

    def int_const(self, vid: int):
        """An integer constant's value (spec constants as specialized), or None."""
        from ..spirv.types import Scalar
        if not self.spec.is_const(vid) or self.spec.def_of(vid).opname == "OpUndef":
            return None
        t = self.value_type(vid)
        if not isinstance(t, Scalar) or t.kind != "int":
            return None
        return int(self.spec.scalar_const(vid))
