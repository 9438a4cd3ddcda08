"""Structured code for the generator's own loops (per-instance and per-element loops of collective
sites): `for`-loops, `if`s and mutable locals over LLVM blocks, so that a site reads like the
loop it is. Locals are allocas; LLVM's mem2reg turns them into registers."""
from __future__ import annotations

from contextlib import contextmanager


class Local:
    """A mutable local of one LLVM type (an alloca in the function's entry)."""

    def __init__(self, gen, t: str, init: str | None = None, hint: str = "v"):
        self.gen, self.t = gen, t
        self.ptr = gen.fn.alloca(t, hint)
        if init is not None:
            self.set(init)

    def get(self) -> str:
        return self.gen.op(f"load {self.t}, ptr {self.ptr}")

    def set(self, v: str):
        self.gen.emit(f"store {self.t} {v}, ptr {self.ptr}")


class Structured:
    """Mixin of the generators: loops, conditionals and locals in LLVM blocks."""

    @contextmanager
    def loop(self, count, start=0, step=1, hint: str = "i"):
        """for i in range(start, count, step), i an i64 (count and start ints or i64 operands,
        step a positive int); the body is the `with` block."""
        fn = self.fn
        pre = fn.cur
        head, body, latch, done = (fn.label(f"{hint}.{x}") for x in ("head", "body", "latch", "end"))
        fn.br(head)
        fn.block(head)
        i = fn.phi("i64", hint)
        i.incoming.append((str(start), pre))
        fn.cbr(self.op(f"icmp slt i64 {i.name}, {count}"), body, done)
        fn.block(body)
        yield i.name
        fn.br(latch)
        fn.block(latch)
        nxt = self.op(f"add i64 {i.name}, {step}")
        i.incoming.append((nxt, latch))
        fn.br(head)
        fn.block(done)

    @contextmanager
    def when(self, cond: str):
        """if cond: the `with` block."""
        fn = self.fn
        then, done = fn.label("then"), fn.label("endif")
        fn.cbr(cond, then, done)
        fn.block(then)
        yield
        if not fn.terminated:
            fn.br(done)
        fn.block(done)

    def choose(self, cond: str, then, otherwise):
        """if cond: then() else: otherwise() (each emits code)."""
        fn = self.fn
        a, b, done = fn.label("then"), fn.label("else"), fn.label("endif")
        fn.cbr(cond, a, b)
        fn.block(a)
        then()
        if not fn.terminated:
            fn.br(done)
        fn.block(b)
        otherwise()
        if not fn.terminated:
            fn.br(done)
        fn.block(done)

    def local(self, t: str, init: str | None = None, hint: str = "v") -> Local:
        return Local(self, t, init, hint)

    def at_index(self, ptr: str, t: str, i) -> str:
        """The address of element i (an int or i64 operand) of an array of t at ptr."""
        return self.op(f"getelementptr {t}, ptr {ptr}, i64 {i}")

    def load_at(self, ptr: str, t: str, i) -> str:
        return self.op(f"load {t}, ptr {self.at_index(ptr, t, i)}")

    def store_at(self, ptr: str, t: str, i, v: str):
        self.emit(f"store {t} {v}, ptr {self.at_index(ptr, t, i)}")
