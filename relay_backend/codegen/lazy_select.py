"""Selects that must run lazily, shared by the LLVM and C expression emitters.

A Select whose true or false value reads a buffer (a padded input's border, one input of a
concatenate) may only evaluate the branch its condition picks: the other branch's load can be
out of range. The emitters give such a Select its own branches (LLVM basic blocks, a C
if/else), with an explicit stack rather than recursion, since a concatenate of 500 inputs nests
500 of them. Values made inside a branch exist only there, so the emitters memoize in a
BranchMemo, which forgets what a branch added when the branch ends.
"""
from .. import tir
from ..tir.functor import children


def lazy_selects(roots) -> set:
    """The ids of the Select nodes under `roots` whose true or false value reads a buffer.

    One iterative post-order pass (each shared node once) marks the nodes whose subtree
    holds a BufferLoad; a Select is lazy when one of its branches is marked.
    """
    reads, lazy, done = set(), set(), set()
    stack = [(root, False) for root in roots]
    while stack:
        node, kids_done = stack.pop()
        if id(node) in done:
            continue
        kids = children(node)
        if not kids_done:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in done)
            continue
        done.add(id(node))
        if isinstance(node, tir.BufferLoad) or any(id(k) in reads for k in kids):
            reads.add(id(node))
        if isinstance(node, tir.Select) and (id(node.true_value) in reads or id(node.false_value) in reads):
            lazy.add(id(node))
    return lazy


class BranchMemo(dict):
    """A memo (id(node) -> emitted value) with branch scopes: `enter()` when code generation
    moves into a branch, `leave()` when it ends; entries added in between are dropped, so a
    value emitted in one branch is never reused where it does not exist. Entries made before
    the branch stay visible in it (they dominate it)."""

    def __init__(self):
        super().__init__()
        self._scopes = []

    def __setitem__(self, key, value):
        if self._scopes and key not in self:
            self._scopes[-1].append(key)
        super().__setitem__(key, value)

    def enter(self) -> None:
        self._scopes.append([])

    def leave(self) -> None:
        for key in self._scopes.pop():
            self.pop(key, None)


__all__ = ["lazy_selects", "BranchMemo"]
