"""Child processes a test starts run fenced as the candidate worker (docs/design.md §8.1, "Child processes"):
a test that runs the candidate's command line through subprocess or os.system gets what plain pytest gives
(the candidate on the child's path, its output, its exit status, the test's working directory and
``tmp_path``), and the child holds no socket, as the worker holds none. Real gate runs on real repositories."""

from __future__ import annotations

import pytest
from test_runner import make_project, run

# The candidate's command line: it says whether it could open a socket (the worker's fence), and its arguments.
CLI = '''import socket, sys

def main():
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        print("network")
    except OSError:
        print("fenced")
    print("args", *sys.argv[1:])
    return 3 if "--fail" in sys.argv else 0

if __name__ == "__main__":
    sys.exit(main())
'''

TESTS = '''
import os
import subprocess
import sys


def test_the_candidates_command_line_runs_with_the_candidate_on_its_path(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "calc_cli", "x"], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [EXPECTED, "args x"]


def test_its_exit_status_and_a_shell(tmp_path):
    assert subprocess.call(f"{sys.executable} -m calc_cli --fail > out.txt", shell=True, cwd=tmp_path) == 3
    assert (tmp_path / "out.txt").read_text().splitlines() == [EXPECTED, "args --fail"]


def test_os_system(tmp_path):
    status = os.system(f"{sys.executable} -m calc_cli y > {tmp_path}/o.txt")
    assert status == 0 and (tmp_path / "o.txt").read_text().splitlines() == [EXPECTED, "args y"]
'''


@pytest.mark.parametrize(("level", "expected"), [("sandbox", "fenced"), ("none", "network")])
def test_a_child_process_a_test_starts_is_fenced_as_the_worker(tmp_path, level, expected):
    repo = make_project(tmp_path, {"test_cli.py": f"EXPECTED = {expected!r}\n" + TESTS},
                        [{"id": "prop.cli", "oracle": "properties/test_cli.py", "kind": "example"}],
                        src={"src/calc_cli.py": CLI}, extra={"isolation": level})
    code, docs, stderr = run(repo, tmp_path / "out")
    record = docs["runs.json"]["runs"]["prop.cli"]
    assert code == 0 and record["status"] == "pass", (record.get("failures"), stderr[-2000:])
    assert set(record["nodes"].values()) == {"passed"} and len(record["nodes"]) == 3
