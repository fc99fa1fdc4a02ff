"""dyn.nn.upsampling and dyn.nn.upsampling3d: nn.upsampling(3d) with the scales given as Relay
scalar tensors (TVM v0.18's names). The output's spatial dims are Any; the VM's shape function,
the reference and DynamicToStatic all go through `to_static` (op/dyn/common.py), and the te
compute is the static op's, which reads only the input and output sizes (as TVM's resize)."""
import dataclasses

import numpy as np

from ...errors import InputError, TypeInferenceError
from ...ir.attrs import Attrs
from ...ir.types import Any, TensorType, type_to_str
from .. import samples as S
from ..nn import _window as Wn
from ..nn.upsampling import UPSAMPLING, UPSAMPLING3D, UpSampling3DAttrs, UpSamplingAttrs, upsampling_compute
from ..registry import Sample
from ..relations import expect_tensor
from .common import defdyn


@dataclasses.dataclass(frozen=True)
class DynUpSamplingAttrs(Attrs):
    layout: str = "NCHW"
    method: str = "nearest_neighbor"
    align_corners: bool = False

    def __post_init__(self):
        UpSamplingAttrs(layout=self.layout, method=self.method)          # the static op's checks
        object.__setattr__(self, "align_corners", bool(self.align_corners))


@dataclasses.dataclass(frozen=True)
class DynUpSampling3DAttrs(Attrs):
    layout: str = "NCDHW"
    method: str = "nearest_neighbor"
    coordinate_transformation_mode: str = "half_pixel"

    def __post_init__(self):
        UpSampling3DAttrs(layout=self.layout, method=self.method,
                          coordinate_transformation_mode=self.coordinate_transformation_mode)


def _make_rel(op, names):
    def rel(arg_types, attrs) -> TensorType:
        """data (N, C, *S) and one float scalar per scale -> (N, C, Any...)."""
        data = expect_tensor(arg_types[0], f"{op} data")
        nd = len(attrs.layout) - 2
        if data.ndim != nd + 2:
            raise TypeInferenceError(f"{op}: data must have rank {nd + 2} ({attrs.layout}), got {type_to_str(data)}")
        for name, t in zip(names, arg_types[1:]):
            t = expect_tensor(t, f"{op} {name}")
            if t.ndim != 0 or not t.dtype.startswith("float"):
                raise TypeInferenceError(f"{op}: {name} must be a float scalar, got {type_to_str(t)}")
        letters = "NC" + Wn.spatial(nd)
        n, c = Wn.pick(data.shape, attrs.layout, letters)[:2]
        return TensorType(Wn.place((n, c) + (Any(),) * nd, letters, attrs.layout), data.dtype)
    return rel


def _scale_values(op, values):
    scales = [float(np.asarray(v).reshape(-1)[0]) for v in values[1:]]
    if any(not np.isfinite(s) or s <= 0 for s in scales):
        raise InputError(f"{op}: the scales {scales} must be positive finite numbers")
    return scales


def _static2d(attrs, values):
    return UPSAMPLING, UpSamplingAttrs(*_scale_values("dyn.nn.upsampling", values), attrs.layout, attrs.method,
                                       attrs.align_corners)


def _static3d(attrs, values):
    return UPSAMPLING3D, UpSampling3DAttrs(*_scale_values("dyn.nn.upsampling3d", values), attrs.layout, attrs.method,
                                           attrs.coordinate_transformation_mode)


def _scalar(value):
    return np.array(value, "float64")


UPSAMPLING_DYN = defdyn(
    "dyn.nn.upsampling", inputs=("data", "scale_h", "scale_w"), static_inputs=(0,), attrs=DynUpSamplingAttrs,
    to_static=_static2d, rel=_make_rel("dyn.nn.upsampling", ("scale_h", "scale_w")), level=2,
    compute=lambda attrs, inputs, out_type: upsampling_compute(attrs, inputs, out_type, UPSAMPLING_DYN.tag),
    samples=lambda rng: [
        Sample([S.rand(rng, (1, 2, 3, 4)), _scalar(2.0), _scalar(1.5)], DynUpSamplingAttrs()),
        Sample([S.rand(rng, (1, 3, 2, 2), "float64"), _scalar(2.0), _scalar(3.0)],
               DynUpSamplingAttrs("NHWC", "bilinear", True))],
    doc="nn.upsampling(data) with scale_h, scale_w read at run time")
UPSAMPLING3D_DYN = defdyn(
    "dyn.nn.upsampling3d", inputs=("data", "scale_d", "scale_h", "scale_w"), static_inputs=(0,),
    attrs=DynUpSampling3DAttrs, to_static=_static3d,
    rel=_make_rel("dyn.nn.upsampling3d", ("scale_d", "scale_h", "scale_w")), level=2,
    compute=lambda attrs, inputs, out_type: upsampling_compute(attrs, inputs, out_type, UPSAMPLING3D_DYN.tag),
    samples=lambda rng: [
        Sample([S.rand(rng, (1, 2, 2, 2, 3)), _scalar(2.0), _scalar(1.0), _scalar(1.5)],
               DynUpSampling3DAttrs(method="trilinear"))],
    doc="nn.upsampling3d(data) with scale_d, scale_h, scale_w read at run time")


def upsampling(data, scale_h, scale_w, layout="NCHW", method="nearest_neighbor", align_corners=False):
    """dyn.nn.upsampling: the scales are float scalar Relay expressions."""
    return UPSAMPLING_DYN(data, scale_h, scale_w, attrs=DynUpSamplingAttrs(layout, method, align_corners))


def upsampling3d(data, scale_d, scale_h, scale_w, layout="NCDHW", method="nearest_neighbor",
                 coordinate_transformation_mode="half_pixel"):
    """dyn.nn.upsampling3d: the scales are float scalar Relay expressions."""
    return UPSAMPLING3D_DYN(data, scale_d, scale_h, scale_w,
                            attrs=DynUpSampling3DAttrs(layout, method, coordinate_transformation_mode))


__all__ = ["upsampling", "upsampling3d"]
