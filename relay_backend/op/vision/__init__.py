"""relay.vision: detection operators (TVM v0.18's relay.op.vision), one family per file; the
sequential ones (sorting, suppression, packing, variable-size pooling) are te.extern kernels
built with tir.ir_builder (ir_common.py holds the descending argsort, on the sort ops' merge
sort, and the IoU they share). Importing the package registers the ops."""
from . import class_nms, multibox, nms, proposal, roi  # noqa: F401  (importing registers the ops)
from .class_nms import all_class_non_max_suppression, regular_non_max_suppression  # noqa: F401
from .multibox import multibox_prior, multibox_transform_loc, yolo_reorg  # noqa: F401
from .nms import get_valid_counts, non_max_suppression  # noqa: F401
from .proposal import proposal  # noqa: F401,F811
from .roi import roi_align, roi_pool  # noqa: F401

__all__ = ["get_valid_counts", "non_max_suppression", "all_class_non_max_suppression",
           "regular_non_max_suppression", "roi_align", "roi_pool", "multibox_prior", "multibox_transform_loc",
           "proposal", "yolo_reorg"]
