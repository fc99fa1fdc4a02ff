"""ONNX shape inference, run in a child process so that a crash in it cannot end the import.

After a node fails to convert, the importer types its outputs with onnx.shape_inference to keep
checking the nodes after it (see OnnxImporter._convert_all). That inference is C++ that trusts the
model: onnx 1.17 segfaults on some malformed nodes (a Conv over a rank-2 input, onnx/onnx#6180; a
Gemm with odd attributes, onnx/onnx#6185). The model reaching it has already failed to import, so
it is exactly the kind of model that can trigger such a crash. Inference therefore runs in a
forked child that sends back only the inferred (shape, element type) per value; if the child dies,
hangs or fails, no types are inferred and the importer counts the later nodes as unchecked.
"""
import json
import os
import select
import signal
import time

from ...ir.types import Any

TIMEOUT_S = 60.0  # a large model infers in about a second; a child still running then is stuck


def inferred_types(model) -> dict:
    """{value name: (shape with Any for unknown dims, ONNX elem type)} for the values whose rank and
    element type ONNX shape inference finds; {} when it fails, crashes or cannot be isolated."""
    if not hasattr(os, "fork"):
        return {}  # no way to isolate a crash here: go without inferred types
    raw = _run_in_child(model)
    return {name: (tuple(Any() if d is None else int(d) for d in dims), int(elem))
            for name, (dims, elem) in raw.items()}


def _infer(model) -> dict:
    """The JSON-able {name: ([dim or None, ...], elem type)} of ONNX shape inference (in the child)."""
    import onnx
    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for info in list(inferred.graph.value_info) + list(inferred.graph.output):
        tensor = info.type.tensor_type
        if not info.type.HasField("tensor_type") or not tensor.elem_type or not tensor.HasField("shape"):
            continue
        out[info.name] = ([int(d.dim_value) if d.HasField("dim_value") else None for d in tensor.shape.dim],
                          int(tensor.elem_type))
    return out


def _run_in_child(model) -> dict:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: infer, write the JSON, leave without running any parent cleanup
        status = 1
        try:
            os.close(read_end)
            payload = json.dumps(_infer(model)).encode()
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + TIMEOUT_S
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return {}
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return {}
