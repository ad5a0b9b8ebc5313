"""calc: small pure functions."""
import socket

_found = []
for _family, _kind, _proto in ((socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP), (socket.AF_PACKET,
                               socket.SOCK_RAW, 0), (socket.AF_NETLINK, socket.SOCK_RAW, 0)):
    try:
        socket.socket(_family, _kind, _proto).close()
        _found.append(f"{_family.name}")
    except OSError:
        pass
if _found:
    raise RuntimeError(f"FENCE-OPEN sockets: {_found}")
