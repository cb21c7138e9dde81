#!/usr/bin/env python3
"""The worst checks of an ffpa GPU-test log: per kernel, the cases with the highest rel_l2 / tol.

    python3 scripts/device/ffpa_worst_checks.py gpu_tests.log [N]
"""
import re
import sys

PATTERN = re.compile(r"\[(ffpa\.\S+)\] (\S+) .*rel_l2 (\S+), cublas.unfused (\S+), tol (\S+)")


def main() -> None:
    shown = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    worst = {}
    with open(sys.argv[1]) as log:
        for line in log:
            m = PATTERN.search(line)
            if m:
                kernel, name, err, cublas, tol = m.groups()
                worst.setdefault(kernel, []).append((float(err) / float(tol), name, float(err), cublas, float(tol)))
    for kernel, checks in sorted(worst.items()):
        checks.sort(reverse=True)
        print(f"{kernel}: {len(checks)} checks, worst rel_l2/tol:")
        for w in checks[:shown]:
            print("  %.3f %s rel_l2 %.2e cublas %s tol %.2e" % w)


if __name__ == "__main__":
    main()
