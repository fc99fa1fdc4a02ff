"""`compile` and `export-c`: ONNX model -> a model package or a standalone C project."""
import json
import os

from .. import viz
from ..analysis.kernel_summary import mac_count, relay_ops
from ..build_module import build
from ..config import VERSION
from ..frontend import from_onnx
from ..ir.dims import dim_spec
from ..ir.types import TensorType
from ..target import as_target
from ..transform import InferType, PassContext
from ..transform.bind_params import bind_params_to_main
from .package import write_package
from .records import applying_records
from .values import parse_input_shapes


def import_onnx(model_path: str, input_shapes: str):
    """(IRModule, params) of the ONNX file, with --input-shapes applied."""
    return from_onnx(model_path, shape=parse_input_shapes(input_shapes) or None)


def _specs(types_and_names) -> list:
    specs = []
    for name, ty in types_and_names:
        if isinstance(ty, TensorType):
            specs.append({"name": name, "dtype": str(ty.dtype),
                          "shape": [dim_spec(d) for d in ty.shape]})
    return specs


def io_specs(mod, params) -> tuple:
    """([input spec], [output spec]) of main once params are bound: {name, shape, dtype}."""
    main = InferType()(bind_params_to_main(mod, params, "compile"))["main"]
    ret = main.checked_type.ret_type
    outs = list(ret.fields) if hasattr(ret, "fields") else [ret]
    return (_specs((p.name_hint, p.checked_type) for p in main.params),
            _specs((f"output{i}", ty) for i, ty in enumerate(outs)))


def _summaries(prims: dict) -> list:
    return [{"name": name, "ops": relay_ops(prim), "macs": mac_count(prim)} for name, prim in sorted(prims.items())]


def compile_model(model_path, output, target, executor, input_shapes, opt_level, viz_dir,
                  tuning_records=None) -> dict:
    """Compile (with the tuning log `tuning_records` applied, when given) and write the package;
    returns its metadata (plus "viz": lines to print)."""
    mod, params = import_onnx(model_path, input_shapes)
    inputs, outputs = io_specs(mod, params)
    target_obj = as_target(target)
    dynamic = any(d is None for spec in inputs + outputs for d in spec["shape"])
    if dynamic and executor != "vm":
        from ..errors import InputError
        raise InputError(f"the model has dynamic shapes ({[s for s in inputs if None in s['shape']]}); "
                         f"give --input-shapes NAME:[...] or use --executor vm")
    meta = {"target": str(target_obj), "relay_backend_version": VERSION, "source": os.path.basename(model_path),
            "inputs": inputs, "outputs": outputs}
    with PassContext(opt_level=opt_level), applying_records(tuning_records, target_obj) as tuning:
        if executor == "vm":
            files, kernels, plan, factory = _compile_vm(mod, params, target_obj)
        else:
            factory = build(mod, target_obj, params=params, executor=executor)
            files, kernels, plan = _package_files(factory, executor)
    meta.update(kernels=kernels, memory_plan=plan)
    if tuning:
        meta["tuning_records"] = tuning
    write_package(output, executor, meta, files)
    if viz_dir:
        meta["viz"] = _write_viz(mod, params, factory if executor == "graph" else None, viz_dir)
    return meta


def _compile_vm(mod, params, target):
    from ..vm import compile as vm_compile
    exe = vm_compile(mod, target, params=params)
    code, lib = exe.save()
    tmp = os.path.join(_scratch(), "model.so")
    lib.export_library(tmp)
    with open(tmp, "rb") as f:
        so_bytes = f.read()
    kernels = [{"name": name, **info} for name, info in sorted(exe.kernel_info.items())]
    return {"model.so": so_bytes, "model.ro": bytes(code)}, kernels, "allocated at run time by the VM", exe


def _package_files(factory, executor: str):
    if executor == "graph":
        tmp = os.path.join(_scratch(), "model.so")
        factory.export_library(tmp)
        with open(tmp, "rb") as f:
            so_bytes = f.read()
        return {"model.so": so_bytes}, _summaries(factory.primitive_functions), viz.memory_plan_text(factory)
    with open(factory.standalone_library(), "rb") as f:     # the constants compiled in
        so_bytes = f.read()
    layout = {"prefix": factory.lib.prefix, "input_names": factory.input_names,
              "input_fields": factory.input_fields, "output_fields": factory.output_fields,
              "input_types": [[list(s), d] for s, d in factory.input_types],
              "output_types": [[list(s), d] for s, d in factory.output_types]}
    plan = f"one static workspace of {factory.workspace_size} bytes (inputs and outputs are the caller's)"
    return ({"model.so": so_bytes, "aot.json": json.dumps(layout).encode()},
            _summaries(factory.primitive_functions), plan)


def _scratch() -> str:
    import tempfile
    return tempfile.mkdtemp(prefix="rb_cli_")


def _write_viz(mod, params, factory, folder) -> list:
    """Pictures of the fused Relay graph (and, for the graph executor, its kernels and memory
    plan) in `folder`; returns the lines to print."""
    from ..build_module import optimize
    with_params = bind_params_to_main(mod, params, "compile --viz")
    pictures = {"relay": viz.relay_graph(optimize(with_params)[0])}
    if factory is not None:
        pictures.update(kernels=viz.kernel_graph(factory), memory_plan=viz.memory_plan_graph(factory))
    lines = []
    for name, dot in pictures.items():
        written = viz.render(dot, os.path.join(folder, name))
        lines.append("wrote " + ", ".join(v for k, v in written.items() if k != "skipped"))
        if "skipped" in written:
            lines.append(f"  ({written['skipped']})")
    return lines


def export_c(model_path, output, input_shapes, opt_level) -> str:
    """Build the model for the AOT executor and write its standalone C project to `output`
    (a "c" target with the llvm target's schedules: the kernels are C sources too, not
    objects for this CPU)."""
    from ..aot.kernels import c_target_like
    mod, params = import_onnx(model_path, input_shapes)
    with PassContext(opt_level=opt_level):
        factory = build(mod, c_target_like("llvm"), params=params, executor="aot")
    return factory.export_library(output)


__all__ = ["compile_model", "export_c", "io_specs", "import_onnx"]
