"""The ONNX converters, one module per family; importing them fills the table."""
from ._registry import TABLE as CONVERTERS
from . import control_flow, indexing, math, nn, nn_ext, reduce, rnn, sequence, tensor  # noqa: F401  (registers the converters)
from . import math_ext  # noqa: F401,E402  (after math: its Mod replaces math's)
from . import image  # noqa: F401  (Resize, Upsample, GridSample)
from . import crop_pad  # noqa: F401,E402  (CenterCropPad)
from . import quantized  # noqa: F401,E402  (QuantizeLinear, QLinearConv, ...: the relay.qnn dialect)

__all__ = ["CONVERTERS"]
from . import activation_ext  # noqa: F401,E402  (Hardmax, Shrink, Mish, Celu)
from . import training  # noqa: F401,E402  (Adagrad, Adam, Momentum: domain ai.onnx.preview.training)
from . import generators  # noqa: F401,E402  (EyeLike, Hann/Hamming/BlackmanWindow, MelWeightMatrix)
from . import placement  # noqa: F401,E402  (Col2Im, MaxUnpool)
from . import training_mode  # noqa: F401,E402  (after nn: Dropout and BatchNormalization in training mode)
from . import ml  # noqa: F401,E402  (ai.onnx.ml Binarizer, ArrayFeatureExtractor)
from . import pad_wrap  # noqa: F401,E402  (after tensor: Pad's mode="wrap", the other modes delegated)
from . import pool_indices  # noqa: F401,E402  (after nn_ext: MaxPool's Indices output)
from . import scan  # noqa: F401,E402  (Scan, unrolled)
from . import det  # noqa: F401,E402  (Det, by unrolled LU)
from . import tfidf  # noqa: F401,E402  (TfIdfVectorizer over integer tokens)
from . import roi_align_max  # noqa: F401,E402  (after image: RoiAlign's ONNX max mode)
from . import deform_conv  # noqa: F401,E402  (DeformConv, with ONNX's border sampling and the mask)
