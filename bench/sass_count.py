#!/usr/bin/env python3
"""sass_count.py - SASS instructions per element of kfuse pointwise kernels
(docs/codegen.md, "Math policy", the table of issue 23's graphs).

    KFUSE_DUMP_DIR=/tmp/d build/kfuse compile GRAPH.yaml --arch sm_90
    python3 bench/sass_count.py /tmp/d/*.cubin

For each CUBIN (with its .cu beside it, as KFUSE_DUMP_DIR writes them) it
disassembles with cuobjdump (CUOBJDUMP, else the one on PATH), takes the
widest loop with 8- or 16-byte global loads or stores (the vector loop),
walks its hot path (a forward branch is followed, not fallen through, when
what it skips holds a loop or a call or more than 64 instructions: a slow
path such as sinf's Payne-Hanek reduction), and divides the instructions on
that path by the elements one trip handles (W of the _elems<W> body times
the trips ptxas unrolled, from the stores). A heuristic for straight-line
pointwise kernels, not a profiler: loads, stores and index arithmetic count.
"""
import os
import re
import shutil
import subprocess
import sys

SIZES = {"kf_f16": 2, "kf_bf16": 2, "float": 4, "bool": 1, "double": 8, "int": 4, "long long": 8}


def sass(cubin):
    tool = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not tool:
        sys.exit("sass_count.py: no cuobjdump (set CUOBJDUMP)")
    out = subprocess.run([tool, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    ins = []
    for line in out.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    return ins


def opcode(t):
    return t.split()[1] if t.startswith("@") else t.split()[0]


def target(t):
    m = re.search(r"\bBRA (?:`\(\.L_x_\d+\) )?(0x[0-9a-f]+)", t)
    return int(m.group(1), 16) if m else None


def vector_loop(ins):
    best = None
    for a, t in ins:
        b = target(t)
        if b is not None and b < a:
            body = [u for x, u in ins if b <= x <= a]
            if any(re.match(r"(LDG|STG)\.E\.(128|64)", opcode(u)) for u in body):
                if best is None or a - b > best[1] - best[0]:
                    best = (b, a)
    return best


def hot_path(ins, head, tail):
    at = {a: i for i, (a, _) in enumerate(ins)}
    i, path = at[head], []
    while ins[i][0] < tail:
        a, t = ins[i]
        path.append(t)
        b = target(t)
        if b is not None and b > a:
            skipped = [(x, u) for x, u in ins if a < x < b]
            cold = len(skipped) > 64 or any(
                "CALL" in u or (target(u) is not None and target(u) < x) for x, u in skipped)
            if not t.startswith("@") or cold:
                i = at[b]
                continue
        i += 1
    return path


def main():
    for cubin in sys.argv[1:]:
        src = open(cubin[: -len(".cubin")] + ".cu").read()
        w = max([int(v) for v in re.findall(r"_elems<(\d+)>\(", src)] or [1])
        ins = sass(cubin)
        loop = vector_loop(ins)
        if not loop:
            print("%s: no vector loop" % cubin)
            continue
        path = hot_path(ins, *loop)
        per_body = sum(max(1, SIZES[t] * w // 16)
                       for t in re.findall(r"kf_stv<([\w ]+), W>", src))
        stores = sum(opcode(t).startswith("STG") for t in path)
        elems = w * (max(1, stores // per_body) if per_body else 1)
        mufu = sum(opcode(t).startswith("MUFU") for t in path)
        print("%-40s %3d elements/trip  %6.1f instructions/element  %.2f MUFU/element"
              % (os.path.basename(cubin), elems, len(path) / elems, mufu / elems))


if __name__ == "__main__":
    main()
