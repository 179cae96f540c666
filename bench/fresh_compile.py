"""fresh_compile.py - the cold compile that issue 8's target names: a
graph file compiled by `kfuse compile --json` in a process of its own,
with an empty kernel cache, so that NVRTC's and the driver's start are paid
as a first run pays them. (bench/suite.py's in-process figure finds
NVRTC loaded already, and shares the CPU with torch.compile's compile
workers: it ranged 19-330 ms for the same code, docs/status.md.)

  python3 bench/fresh_compile.py FILE... [--kfuse PATH]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def fresh_compile_ms(path, kfuse="kfuse"):
    """(compile_ms as kfuse reports it, wall ms of the whole process) for
    `path` compiled in a fresh process with an empty cache; None when the
    command is missing or fails."""
    exe = shutil.which(kfuse)
    if not exe:
        return None
    cache = tempfile.mkdtemp(prefix="kfuse-cold-")
    try:
        env = dict(os.environ, KFUSE_CACHE_DIR=cache)
        t0 = time.perf_counter()
        p = subprocess.run([exe, "compile", path, "--json"], env=env, capture_output=True,
                           text=True, timeout=300)
        wall = (time.perf_counter() - t0) * 1e3
        if p.returncode != 0:
            return None
        return json.loads(p.stdout.strip().splitlines()[-1])["compile_ms"], wall
    except (OSError, ValueError, KeyError, IndexError, subprocess.SubprocessError):
        return None
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--kfuse", default="kfuse", help="the kfuse command (default: on PATH)")
    args = ap.parse_args()
    bad = 0
    for f in args.files:
        r = fresh_compile_ms(f, args.kfuse)
        if r is None:
            print("%s: failed" % f)
            bad = 1
        else:
            print("%s: compile %.1f ms, process %.1f ms" % (f, r[0], r[1]))
    return bad


if __name__ == "__main__":
    sys.exit(main())
