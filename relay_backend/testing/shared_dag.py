"""Random programs whose nodes are shared across scopes, for the sharing tests of the printer and
the VM (ir/sharing.py): every new node picks its operands from all nodes made so far, so one
node ends up used from several If branches, nested let blocks and tuples at once.

    func = shared_dag_program(seed=3, size=30)   # fn (%x: Tensor[(2), float32], %c: bool, %d: bool)
"""
import numpy as np

from .. import ir
from ..op import add, negative, multiply


def shared_dag_program(seed: int, size: int = 30) -> ir.Function:
    """A seeded well-typed function of x (2,) float32 and two bool conditions c, d."""
    rng = np.random.default_rng(seed)
    x = ir.var("x", shape=(2,))
    conds = [ir.var("c", shape=(), dtype="bool"), ir.var("d", shape=(), dtype="bool")]
    pool = [x]

    def pick():
        # mostly recent nodes, so nesting grows deep, sometimes any node, so old ones are shared
        if rng.random() < 0.8:
            return pool[-min(len(pool), int(rng.geometric(0.35)))]
        return pool[int(rng.integers(len(pool)))]

    for i in range(size):
        kind = int(rng.integers(5))
        if kind == 0:
            node = add(pick(), pick())
        elif kind == 1:
            node = negative(pick())
        elif kind == 2:
            node = ir.If(conds[int(rng.integers(2))], pick(), multiply(pick(), ir.const(0.5)))
        elif kind == 3:
            v = ir.var(f"v{i}", shape=(2,))
            node = add(ir.Let(v, pick(), add(v, pick())), pick())     # a let block inside a call
        else:
            node = ir.TupleGetItem(ir.Tuple([pick(), pick()]), int(rng.integers(2)))
        pool.append(node)
    return ir.Function([x, *conds], ir.Tuple(pool[-3:]))


__all__ = ["shared_dag_program"]
