"""Run mutually nested generators on an explicit stack: deep recursion without Python recursion.

A tree walk written recursively fails past Python's recursion limit (about 1,000 frames); the
printer and the parser meet programs nested far deeper (thousands of Ifs). Written as
generators instead, a step that needs the result of a sub-step *yields* the sub-step's
generator and receives its return value; `drive` runs them all on one list.

    def text(node):
        left = yield text(node.left)     # "call" the sub-step
        return left + "..."

    drive(text(root))
"""


def drive(gen):
    """Run a generator (and the generators it yields) to completion without Python recursion.

    A generator yields another generator to ask for its result (e.g. the text of a nested
    scope); the child runs on the explicit stack and its return value is sent back. An
    exception thrown by a child is thrown into its parent, as a call would propagate it."""
    stack, value, error = [gen], None, None
    while stack:
        try:
            if error is not None:
                request, error = stack[-1].throw(error), None
            else:
                request = stack[-1].send(value)
        except StopIteration as stop:
            stack.pop()
            value = stop.value
            continue
        except BaseException as err:  # noqa: BLE001 - re-raised in the parent, or below
            stack.pop()
            if not stack:
                raise
            error = err
            continue
        stack.append(request)
        value = None
    return value


__all__ = ["drive"]
