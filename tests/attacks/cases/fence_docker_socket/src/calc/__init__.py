"""calc: small pure functions."""
import socket

_open = []
for _path in ("/var/run/docker.sock", "/run/docker.sock", "@@UNIX@@"):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as _s:
            _s.settimeout(2)
            _s.connect(_path)
            _open.append(_path)
            _s.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            _open.append(f"{_path} answered {_s.recv(64)!r}")
    except OSError:
        pass
if _open:
    raise RuntimeError(f"FENCE-OPEN docker socket reached: {_open}")
