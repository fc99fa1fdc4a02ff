"""Node: the base every IR object shares (expressions, types, patterns, clauses, type
definitions, attrs, modules), for what TVM's Object offers them all: `same_as`."""


class Node:
    """Mixin of IR objects: `same_as` is object identity, as TVM's Object.same_as (use
    ir.structural.structural_equal to compare structure)."""

    __slots__ = ()

    def same_as(self, other) -> bool:
        """Whether `other` is this very object (TVM's Object.same_as): identity, not structure.

        Parameters
        ----------
        other : object
            The object to compare with.

        Returns
        -------
        same : bool
            True only for the same object; use ir.structural.structural_equal to compare structure.
        """
        return self is other
