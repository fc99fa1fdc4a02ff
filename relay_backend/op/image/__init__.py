"""relay.image: image operators (TVM v0.18's relay.op.image), one family per file: resize1d /
resize2d / resize3d (resize.py, arithmetic in interp.py), crop_and_resize, dilation2d,
affine_grid and grid_sample (grid.py). Importing the package registers the ops."""
from . import crop_and_resize, dilation2d, grid, resize  # noqa: F401  (importing registers the ops)
from .crop_and_resize import crop_and_resize  # noqa: F401,F811
from .dilation2d import dilation2d  # noqa: F401,F811
from .grid import affine_grid, grid_sample  # noqa: F401
from .resize import resize1d, resize2d, resize3d  # noqa: F401

__all__ = ["resize1d", "resize2d", "resize3d", "crop_and_resize", "dilation2d", "affine_grid", "grid_sample"]
