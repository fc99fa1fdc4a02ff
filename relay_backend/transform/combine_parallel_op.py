"""The machinery shared by CombineParallelConv2D / Dense / BatchMatmul (Relay's
ParallelOpCombiner): find groups of parallel calls of one op that read the same input, and
replace each group by one wider call whose result is sliced back into the branches.

A *branch* starts at a call of the op and extends through following elementwise/broadcast calls
(pattern <= BROADCAST) as long as each link is the only consumer of the previous one. Branches
whose first calls read the same input and that `compatible` says can merge form a group; a group
with at least `min_num_branches` branches is combined: `make_combined(group)` builds the wide
call, then level by level the following calls are merged too while every branch has the same op
and attributes there and `arg_compatible` accepts the other arguments (which are joined by
`join_args`), and finally `split_output` gives each branch's slice of the result. Meaning is
unchanged; the pass needs types (it infers them when missing).
"""
from ..ir.expr import Call, Function
from ..ir.functor import ExprMutator, all_children, all_nodes_post_order
from ..op.pattern import OpPattern
from ..ir.types import TensorType
from ..op.indexing import strided_slice
from ..op.registry import OpDef
from ..op.transform import concatenate
from .rewrite import typed_function

# what the CombineParallel* pass constructors share (shared_parameters completes their docstrings)
COMBINER_PARAMETERS = {"min_num_branches": ("int", "The least number of parallel branches worth combining.")}
COMBINER_PASS = ("pass", "Pass", "The pass; call it on an IRModule.")


class ParallelOpCombiner:
    """Subclasses define op_name, is_supported, compatible, make_combined, arg_compatible,
    join_args and split_output (see the module docstring)."""

    op_name = None

    def __init__(self, min_num_branches: int):
        self.min_num_branches = int(min_num_branches)

    # --- hooks ----------------------------------------------------------------------------------
    def is_supported(self, call) -> bool:
        return True

    def compatible(self, a, b) -> bool:
        raise NotImplementedError

    def make_combined(self, group):
        raise NotImplementedError

    def arg_compatible(self, a, b, index) -> bool:
        raise NotImplementedError

    def join_args(self, calls, index, out_rank):
        raise NotImplementedError

    def split_output(self, combined, group, depth) -> list:
        raise NotImplementedError

    def can_follow(self, call) -> bool:
        """Whether a following call may be merged at all (before its arguments are checked)."""
        return True

    # --- finding groups -------------------------------------------------------------------------
    def find_groups(self, func: Function) -> list:
        consumers, roots = {}, []
        for node in all_nodes_post_order(func.body):
            for child in all_children(node):
                consumers.setdefault(child, []).append(node)
            if self._is_root_call(node) and node.args[0] not in roots:
                roots.append(node.args[0])
        groups = []
        for root in roots:
            local = []
            for call in consumers.get(root, []):
                if not self._is_root_call(call) or call.args[0] is not root:
                    continue
                branch = self._branch(call, consumers)
                home = next((g for g in local if self.compatible(call, g[0][0])), None)
                if home is None:
                    local.append([branch])
                else:
                    home.append(branch)
            groups.extend(local)
        return groups

    def _is_root_call(self, node) -> bool:
        return isinstance(node, Call) and isinstance(node.op, OpDef) and \
            node.op.name == self.op_name and self.is_supported(node)

    @staticmethod
    def _branch(call, consumers) -> list:
        branch = [call]
        while True:
            users = consumers.get(branch[-1], [])
            if len(users) != 1:
                return branch
            nxt = users[0]
            if not (isinstance(nxt, Call) and isinstance(nxt.op, OpDef)
                    and nxt.op.pattern <= OpPattern.BROADCAST):
                return branch
            branch.append(nxt)

    # --- combining ------------------------------------------------------------------------------
    def combine(self, func: Function, mod=None) -> Function:
        func = typed_function(func, mod)
        replacements = {}
        for group in self.find_groups(func):
            if len(group) >= self.min_num_branches:
                self._combine_group(group, replacements)
        if not replacements:
            return func
        return _Substitute(replacements).visit(func)

    def _combine_group(self, group, replacements) -> None:
        combined = self.make_combined(group)
        depth = min(len(b) for b in group)
        level = 1
        while level < depth:
            first = group[0][level]
            parent_index = next(i for i, a in enumerate(first.args) if a is group[0][level - 1])
            if not self._level_ok(group, level, parent_index):
                break
            out_rank = first.checked_type.ndim
            args = [combined if i == parent_index else
                    self.join_args([b[level] for b in group], i, out_rank)
                    for i in range(len(first.args))]
            combined = Call(first.op, args, first.attrs, first.type_args)
            level += 1
        for branch, piece in zip(group, self.split_output(combined, group, level - 1)):
            replacements[branch[level - 1]] = piece

    def _level_ok(self, group, level, parent_index) -> bool:
        first = group[0][level]
        if not self.can_follow(first):
            return False
        for branch in group[1:]:
            call = branch[level]
            if call.op is not first.op or len(call.args) != len(first.args) or \
                    call.attrs != first.attrs:
                return False
            if call.args[parent_index] is not branch[level - 1]:
                return False
            for i in range(len(first.args)):
                if i != parent_index and not self.arg_compatible(first, call, i):
                    return False
        return True


class ChannelConcatCombiner(ParallelOpCombiner):
    """Combiners whose wide call concatenates the branches along one output axis (`self.axis`,
    set by make_combined): following ops' arguments must carry that axis at full size, and are
    concatenated along it; each branch slices its `out_channels(call)` back out."""

    axis = None

    def out_channels(self, call) -> int:
        raise NotImplementedError

    def arg_compatible(self, a, b, index) -> bool:
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        out_a, out_b = a.checked_type, b.checked_type
        if not (isinstance(ta, TensorType) and isinstance(tb, TensorType)) or \
                ta.dtype != tb.dtype or ta.ndim != tb.ndim:
            return False
        pos = self.axis - out_a.ndim + ta.ndim
        if pos < 0 or ta.shape[pos] != out_a.shape[self.axis] or \
                tb.shape[pos] != out_b.shape[self.axis]:
            return False
        return all(ta.shape[i] == tb.shape[i] for i in range(ta.ndim) if i != pos)

    def join_args(self, calls, index, out_rank):
        arg_rank = calls[0].args[index].checked_type.ndim
        return concatenate([c.args[index] for c in calls], axis=self.axis - out_rank + arg_rank)

    def split_output(self, combined, group, depth) -> list:
        out, begin = [], 0
        for branch in group:
            size = self.out_channels(branch[0])
            out.append(channel_slice(combined, self.axis, begin, size))
            begin += size
        return out


class _Substitute(ExprMutator):
    """Replaces chosen calls (branch outputs) by their slices of the combined call; a
    replacement may itself read other replaced calls."""

    def __init__(self, replacements):
        super().__init__()
        self.replacements = replacements

    def visit_call(self, call):
        if call in self.replacements:
            return self.visit(self.replacements[call])
        return super().visit_call(call)


def channel_slice(data, axis: int, begin: int, size: int):
    """data[..., begin:begin + size, ...] along `axis` (strided_slice in size mode)."""
    return strided_slice(data, [0] * axis + [begin], [-1] * axis + [size], [1] * (axis + 1),
                         slice_mode="size")


__all__ = ["ParallelOpCombiner", "ChannelConcatCombiner", "channel_slice"]
