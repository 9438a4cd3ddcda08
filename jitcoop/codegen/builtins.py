"""Built-in inputs of compute shaders as generated code computes them from the lane and workgroup
numbers: invocation and workgroup ids, sizes, subgroup ids and masks."""
from __future__ import annotations

from ..errors import SpirvError


def emit_lane_coordinates(fn, local_size, frame_stride: int):
    """%lx, %ly, %lz (LocalInvocationId) from %lane, and %lanefr, the lane's Private frame in
    %pvp (lanes' frames frame_stride bytes apart: jitcoop.analysis.variables): what the builtins
    and Private variables of one lane read."""
    lx, ly, _ = local_size
    fn.emit(f"%lx = urem i64 %lane, {lx}")
    fn.emit(f"%lq = udiv i64 %lane, {lx}")
    fn.emit(f"%ly = urem i64 %lq, {ly}")
    fn.emit(f"%lz = udiv i64 %lane, {lx * ly}")
    fn.emit(f"%lanefr0 = mul i64 %lane, {frame_stride}")
    fn.emit("%lanefr = add i64 %pvp, %lanefr0")


class Builtins:
    """Mixin of KernelGen: the leaves of a built-in input."""

    def builtin_leaves(self, name: str, ins) -> list[str]:
        lx, ly, lz = self.local_size
        u = lambda v: self.op(f"trunc i64 {v} to i32")
        if name == "LocalInvocationId":
            return [u("%lx"), u("%ly"), u("%lz")]
        if name == "LocalInvocationIndex":
            return [u(self.lane_reg)]
        if name == "WorkgroupId":
            return [u("%wx"), u("%wy"), u("%wz")]
        if name == "NumWorkgroups":
            return [u("%ngx"), u("%ngy"), u("%ngz")]
        if name == "GlobalInvocationId":
            out = []
            for w, l, n in (("%wx", "%lx", lx), ("%wy", "%ly", ly), ("%wz", "%lz", lz)):
                a = self.op(f"mul i64 {w}, {n}")
                out.append(u(self.op(f"add i64 {a}, {l}")))
            return out
        if name == "WorkgroupSize":
            return [str(lx), str(ly), str(lz)]
        if name in ("SubgroupSize", "SubgroupMaxSize"):
            return [str(self.sg)]
        if name == "SubgroupLocalInvocationId":
            return [u(self.op(f"urem i64 {self.lane_reg}, {self.sg}"))]
        if name == "SubgroupId":
            return [u(self.op(f"udiv i64 {self.lane_reg}, {self.sg}"))]
        if name == "NumSubgroups":
            return [str(self.NSG)]
        if name in ("SubgroupEqMask", "SubgroupGeMask", "SubgroupGtMask", "SubgroupLeMask", "SubgroupLtMask"):
            i = self.op(f"urem i64 {self.lane_reg}, {self.sg}")
            return [self._mask_word(name[8:10], i, w) for w in range(4)]
        raise SpirvError(f"built-in {name} is not supported in compute shaders", **ins.where())

    def _mask_word(self, kind: str, i: str, w: int) -> str:
        """Word w of a subgroup mask of lane index i (within the subgroup)."""
        lo = 32 * w
        # bits of the word set for positions p with lo <= p < lo + 32 and (p ? i)
        rel = self.op(f"sub i64 {i}, {lo}")
        if kind == "Eq":
            inw = self.op(f"icmp ult i64 {rel}, 32")
            sh = self.op(f"and i64 {rel}, 31")
            bit = self.op(f"shl i64 1, {sh}")
            return self.op(f"trunc i64 {self.op(f'select i1 {inw}, i64 {bit}, i64 0')} to i32")
        # count of positions below i (Lt), up to i (Le): ones below bit n of the word
        if kind in ("Lt", "Le"):
            n = rel if kind == "Lt" else self.op(f"add i64 {rel}, 1")
            c = self._clamp32(n)
            ones = self.op(f"shl i64 1, {c}")
            m = self.op(f"sub i64 {ones}, 1")
            return self.op(f"trunc i64 {m} to i32")
        n = self.op(f"add i64 {rel}, 1") if kind == "Gt" else rel
        c = self._clamp32(n)
        ones = self.op(f"shl i64 1, {c}")
        m = self.op(f"sub i64 {ones}, 1")
        inv = self.op(f"xor i64 {m}, 4294967295")
        full = self.op(f"and i64 {inv}, {self._sg_word_mask(w)}")
        return self.op(f"trunc i64 {full} to i32")

    def _clamp32(self, n: str) -> str:
        lo = self.op(f"icmp slt i64 {n}, 0")
        a = self.op(f"select i1 {lo}, i64 0, i64 {n}")
        hi = self.op(f"icmp sgt i64 {a}, 32")
        return self.op(f"select i1 {hi}, i64 32, i64 {a}")

    def _sg_word_mask(self, w: int) -> int:
        """Bits of word w that name lanes of the subgroup."""
        n = max(0, min(32, self.sg - 32 * w))
        return (1 << n) - 1
