"""The host's fused multiply-add peak in float32 and float64, on one thread and on two at once,
measured in the run that reports the GEMMs (benchmarks/test_bench_styles.py): what bounds their
figures. A float32 BLAS runs near the float32 peak; jitcoop's MulAdds with exact numerics sum in
float64, whose FMAs do half the work per instruction, so their ratio to numpy's float32 matmul
cannot pass (float64 peak / numpy's speed); and two threads cannot pass the two-thread peak's
multiple of one thread's (a shared machine gives a second core less than a whole one).

The loop: independent accumulator chains of the host's vector width (enough to cover the FMA
latency), FMAs on operands loaded from memory (nothing folds), compiled by jitcoop's LLVM.
"""
from __future__ import annotations

import ctypes
import threading
import time

from jitcoop.runtime import jit

CHAINS = 12             # accumulators: 2 FMA units x 4 cycles of latency, and some to spare
ITERATIONS = 1 << 24    # FMAs per chain a call (12 x 16M x 8 lanes x 2 = 3.2 GFLOP in float32)


def _ir(t: str, width: int) -> str:
    vt = f"<{width} x {t}>"
    fma = f"@llvm.fma.v{width}{'f32' if t == 'float' else 'f64'}"
    phis = "\n".join(f"  %a{j} = phi {vt} [ %x, %entry ], [ %b{j}, %loop ]" for j in range(CHAINS))
    steps = "\n".join(f"  %b{j} = call {vt} {fma}({vt} %a{j}, {vt} %x, {vt} %y)" for j in range(CHAINS))
    sums = [f"%b{j}" for j in range(CHAINS)]
    adds = []
    while len(sums) > 1:
        k = len(adds)
        adds.append(f"  %s{k} = fadd {vt} {sums[0]}, {sums[1]}")
        sums = sums[2:] + [f"%s{k}"]
    adds = "\n".join(adds)
    return f"""declare {vt} {fma}({vt}, {vt}, {vt})
define void @peak(i64 %n, ptr %io) {{
entry:
  %x = load {vt}, ptr %io, align 1
  %yp = getelementptr {vt}, ptr %io, i64 1
  %y = load {vt}, ptr %yp, align 1
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
{phis}
{steps}
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
{adds}
  store {vt} {sums[0]}, ptr %io, align 1
  ret void
}}
"""


def _function(t: str):
    """(the peak loop of float type t as a ctypes function, its vector width)."""
    bits = 32 if t == "float" else 64
    width = jit.vector_registers()[0] // bits
    key = f"host_peak_{t}_{width}_{CHAINS}"
    addr = jit.load_object(key, jit.compile_ir(_ir(t, width)), ["peak"])["peak"]
    return ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)(addr), width


def _rate(fn, width, t, threads: int) -> float:
    """GFLOP/s of `threads` threads each running the loop once at the same time (each with its
    own operands); best of three."""
    ctype = ctypes.c_float if t == "float" else ctypes.c_double
    bufs = [(ctype * (2 * width))(*([1.0] * width + [1e-7] * width)) for _ in range(threads)]
    best = float("inf")
    for _ in range(3):
        go = threading.Barrier(threads + 1)

        def run(buf):
            go.wait()
            fn(ITERATIONS, ctypes.addressof(buf))       # ctypes lets go of the GIL for the call
        workers = [threading.Thread(target=run, args=(b,)) for b in bufs]
        for w in workers:
            w.start()
        go.wait()
        t0 = time.perf_counter()
        for w in workers:
            w.join()
        best = min(best, time.perf_counter() - t0)
    return threads * CHAINS * ITERATIONS * width * 2 / best / 1e9


def measure(threads: int = 2) -> dict:
    """{"float32": (one thread's GFLOP/s, `threads` threads'), "float64": (...)}."""
    out = {}
    for t, name in (("float", "float32"), ("double", "float64")):
        fn, width = _function(t)
        warm = (ctypes.c_double * (2 * width))()
        fn(1024, ctypes.addressof(warm))
        out[name] = (_rate(fn, width, t, 1), _rate(fn, width, t, threads))
    return out


def describe(peaks: dict, threads: int = 2) -> str:
    f1, fn = peaks["float32"]
    d1, dn = peaks["float64"]
    return (f"host FMA peak, measured in this run: float32 {f1:.0f} GFLOP/s on one thread, {fn:.0f} on "
            f"{threads} ({fn / f1:.2f}x); float64 {d1:.0f} and {dn:.0f} ({dn / d1:.2f}x)")


if __name__ == "__main__":
    print(describe(measure()))
