"""Runtime containers: ADT (tuples have tag 0) as returned by the interpreter and the VM."""


class ADT:
    """An algebraic data type value at run time: a constructor tag and its fields
    (tvm.runtime.container.ADT). Indexing and iterating give the fields.

    Parameters
    ----------
    tag : int
        The index of the constructor among its type's constructors (0 for a tuple).
    fields : list
        The field values (NDArrays, ADTs, closures).
    """

    __slots__ = ("tag", "fields")

    def __init__(self, tag: int, fields):
        self.tag = int(tag)
        self.fields = tuple(fields)

    def __getitem__(self, i):
        return self.fields[i]

    def __len__(self) -> int:
        return len(self.fields)

    def __iter__(self):
        return iter(self.fields)

    def __repr__(self) -> str:
        return f"ADT(tag={self.tag}, fields={list(self.fields)!r})"


def tuple_object(fields) -> ADT:
    """A runtime tuple: an ADT with tag 0 (tvm.runtime.container.tuple_object).

    Parameters
    ----------
    fields : list
        The tuple's elements.

    Returns
    -------
    value : ADT
        ADT(0, fields).
    """
    return ADT(0, fields)
