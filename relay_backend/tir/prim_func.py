"""PrimFunc: a kernel — buffer parameters (inputs then outputs), a body, a name, attrs."""
from .buffer import Buffer
from .expr import Var


class PrimFunc:
    """A loop-nest function over `params` (Buffers; inputs first, then outputs).

    Symbolic Vars in the buffers' shapes are the function's shape vars (`shape_vars`); a
    caller binds them from the actual argument shapes. attrs: free-form dict (e.g.
    "global_symbol", "num_outputs").
    """
    __slots__ = ("params", "body", "name", "attrs")

    def __init__(self, params, body, name="main", attrs=None):
        for p in params:
            if not isinstance(p, Buffer):
                raise TypeError(f"PrimFunc {name}: params must be Buffers, got {p!r}")
        self.params = list(params)
        self.body = body
        self.name = name
        self.attrs = dict(attrs or {})

    @property
    def shape_vars(self):
        """Symbolic Vars in the parameter shapes, in order of first appearance."""
        return shape_vars_of(self.params)

    def with_body(self, body) -> "PrimFunc":
        return PrimFunc(self.params, body, self.name, self.attrs)

    def script(self) -> str:
        from .printer import func_to_str
        return func_to_str(self)

    def __repr__(self):
        return self.script()


def shape_vars_of(buffers):
    from .functor import walk
    seen, out = set(), []
    for buf in buffers:
        for dim in list(buf.shape) + list(buf.strides or ()):
            for node in walk(dim):
                if isinstance(node, Var) and id(node) not in seen:
                    seen.add(id(node))
                    out.append(node)
    return out
