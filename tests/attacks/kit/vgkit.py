"""Attack kit: how a hostile candidate finds and forges verdict-gate's results stream.

Copied into a case's patch as ``src/calc/_vgkit.py`` when its attack.yaml says ``kit: true``.
Every search stays inside this run's own work directories (derived from argv, /proc or the
cwd), never the rest of the machine.
"""

import glob
import json
import os
import sys
import time

RESULTS_FLAG = "--verdict-gate-results"
SPEC_FLAG = "--verdict-gate-spec"


def _flag(argv, name):
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def results_from_argv():
    return _flag(sys.argv, RESULTS_FLAG)


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return []


def results_from_proc_self_cmdline():
    return _flag(cmdline("self"), RESULTS_FLAG)


def _jsonl_fds(pid):
    found = []
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if os.path.basename(target).startswith("results-") and target.endswith(".jsonl"):
            found.append(target)
    return found


def results_from_proc_fd():
    found = _jsonl_fds("self")
    return found[0] if found else None


def results_from_parent_fd():
    found = _jsonl_fds(os.getppid())
    return found[-1] if found else None


def run_root():
    """This run's scratch directory: the cwd is <scratch>/verdict-gate-wt-*/tree."""
    return os.path.dirname(os.path.dirname(os.getcwd()))


def results_by_scanning():
    found = sorted(glob.glob(os.path.join(run_root(), "**", "results-*.jsonl"), recursive=True),
                   key=os.path.getmtime)
    return found[-1] if found else None


def spec_for(results_path):
    """The run spec beside ``results_path`` (results-N.jsonl -> spec-N.json), else the one in argv."""
    if results_path:
        spec = os.path.join(os.path.dirname(results_path),
                            os.path.basename(results_path).replace("results-", "spec-").replace(".jsonl", ".json"))
    else:
        spec = _flag(sys.argv, SPEC_FLAG)
    with open(spec, encoding="utf-8") as fh:
        return json.load(fh)


def forged_records(spec):
    records = []
    for prop in spec["properties"]:
        records.append({"event": "start", "id": prop["id"], "time": time.time()})
        records.append({"event": "result", "id": prop["id"], "status": "pass", "seed": prop.get("seed"),
                        "hypothesis": prop.get("kind") == "property", "trials": 100, "hits": 100, "items": 1,
                        "duration_s": 0.01, "fixture_mutated": False, "node": prop["selector"]})
    records.append({"event": "end", "id": ""})
    return records


def forged_text(spec):
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in forged_records(spec))


def forge(results_path, truncate=False):
    """Write a complete all-pass stream for every property of this process."""
    if not results_path:
        return False
    spec = spec_for(results_path)
    with open(results_path, "w" if truncate else "a", encoding="utf-8") as fh:
        fh.write(forged_text(spec))
        fh.flush()
    return True


def forge_and_exit(results_path, code=0):
    if forge(results_path):
        os._exit(code)


def gate_pid():
    """The gate's process: the parent of this pytest process."""
    return os.getppid()


def gate_out_dir():
    """The gate's --out directory, read from the gate's own command line."""
    args = cmdline(gate_pid())
    out = _flag(args, "--out")
    if out and not os.path.isabs(out):
        try:
            out = os.path.join(os.readlink(f"/proc/{gate_pid()}/cwd"), out)
        except OSError:
            return None
    return out


def gate_environ():
    try:
        with open(f"/proc/{gate_pid()}/environ", "rb") as fh:
            raw = fh.read()
    except OSError:
        return {}
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.decode(errors="replace").partition("=")
        if sep:
            env[key] = value
    return env
