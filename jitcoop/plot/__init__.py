"""Pictures of what jitcoop knows, with matplotlib (`pip install jitcoop[plot]`).

- `lane_layout(device, "f16", 16, 16, "A")`: which invocation holds which element of a
  cooperative matrix type on a device profile (`lane_map` gives the numbers).
- `tensor_load(rows, cols, TensorLayout(...), TensorView(...))`: which tensor elements a tile
  reads through SPV_NV_tensor_addressing, with clamped and clipped elements marked
  (`tensor_addresses` gives the numbers).
- `profile_comparison(report_a, report_b)`: two decode variants' profiles side by side
  (`jitcoop profile A.spv --compare B.spv --plot out.png`).

Each returns a matplotlib Figure; save it with `fig.savefig("x.png")`. In a notebook it shows
itself. The numbers behind each picture come from functions that need numpy only.
"""

from .layout import lane_layout, lane_map
from .profile import profile_comparison
from .tensor import TensorLayout, TensorView, tensor_addresses, tensor_load

__all__ = ["lane_layout", "lane_map", "tensor_load", "tensor_addresses", "TensorLayout", "TensorView",
           "profile_comparison"]
