"""The instructions of a kernel's steady-state loop, counted from its SASS: how docs/PERF.md counts
fa3.wgmma's instructions a tile (the issue-slot budget of D 64).

For each function of OBJECT (a .o or a binary with sm_90a code) whose mangled name matches
--function, it takes the smallest loop (a backward branch and the code it jumps back over) holding
at least --hgmma warpgroup MMAs, and prints the loop's instruction count and opcode histogram; with
--skip-forward, instructions jumped over by a forward branch inside the loop (a path the steady state
does not take, such as fa3's masking of a band's tiles) are counted apart.

Usage: scripts/sass_loop.py build/kernels/CMakeFiles/attnscope.kernels.fa3.dir/fa3/inst/fa3_d64_fp16.cu.o \
           --function 'Li64ELi128ELi3ELi3ELi1E' --hgmma 12 --skip-forward
cuobjdump comes from $CUOBJDUMP, else PATH, else /usr/local/cuda/bin (on a machine without one,
PyPI's nvidia-cuda-cuobjdump wheel holds a copy).
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

INSTR = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
BRANCH = re.compile(r"\bBRA\s+(?:[!A-Z0-9.]+,\s*)?0x([0-9a-f]+)")


def cuobjdump() -> str:
    for cand in (os.environ.get("CUOBJDUMP"), shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"):
        if cand and os.access(cand, os.X_OK):
            return cand
    sys.exit("sass_loop.py: no cuobjdump (set CUOBJDUMP, or put one on PATH)")


def functions(sass: str):
    """(name, [(address, instruction)]) for each function of the listing."""
    name, body = None, []
    for line in sass.splitlines():
        if "Function :" in line:
            if name:
                yield name, body
            name, body = line.split("Function :", 1)[1].strip(), []
            continue
        m = INSTR.match(line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(2)))
    if name:
        yield name, body


def opcode(instr: str) -> str:
    words = instr.split()
    op = words[1] if words[0].startswith("@") else words[0]
    return op.split(".")[0]


def steady_loop(body, min_mma: int):
    best = None
    for addr, instr in body:
        m = BRANCH.search(instr)
        if not m or int(m.group(1), 16) >= addr:
            continue
        lo = int(m.group(1), 16)
        loop = [(a, i) for a, i in body if lo <= a <= addr]
        if sum(opcode(i) == "HGMMA" for _, i in loop) >= min_mma and (best is None or len(loop) < len(best)):
            best = loop
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("object", help="a .o or binary holding the kernels' SASS")
    ap.add_argument("--function", default=".", help="regex on the mangled function names")
    ap.add_argument("--hgmma", type=int, default=1, help="the loop holds at least this many HGMMA")
    ap.add_argument("--skip-forward", action="store_true", help="count forward-branch skipped code apart")
    args = ap.parse_args()
    sass = subprocess.run([cuobjdump(), "-sass", args.object], capture_output=True, text=True, check=True).stdout
    found = False
    for name, body in functions(sass):
        if not re.search(args.function, name):
            continue
        found = True
        loop = steady_loop(body, args.hgmma)
        if loop is None:
            print(f"{name}: no loop with {args.hgmma} HGMMA")
            continue
        skipped = set()
        if args.skip_forward:
            for addr, instr in loop:
                m = BRANCH.search(instr)
                if m and int(m.group(1), 16) > addr and int(m.group(1), 16) <= loop[-1][0]:
                    skipped |= {a for a, _ in loop if addr < a < int(m.group(1), 16)}
        taken = [i for a, i in loop if a not in skipped]
        hist = collections.Counter(opcode(i) for i in taken)
        print(f"{name}: loop {hex(loop[0][0])}-{hex(loop[-1][0])}, {len(taken)} instructions"
              + (f" ({len(skipped)} more behind forward branches)" if skipped else ""))
        print("  " + ", ".join(f"{op} {n}" for op, n in hist.most_common()))
    if not found:
        sys.exit(f"sass_loop.py: no function matches {args.function!r}")


if __name__ == "__main__":
    main()
