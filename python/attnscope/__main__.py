"""``python -m attnscope ARGS``: the attnscope command line in this interpreter (``worker`` is how a
sweep runs Python kernels), plus ``describe``, which C++ front-ends ask what a Python kernel entry
registers."""
import json
import sys

from . import _attnscope


def describe(args):
    backend = "cpu"
    entries = []
    it = iter(args)
    for a in it:
        if a == "--backend":
            backend = next(it, "cpu")
        elif a == "--adapters":
            from . import adapters
            print("ATTNSCOPE_DESCRIBE " + json.dumps({"adapters": adapters.availability()}), flush=True)
            return 0
        else:
            entries.append(a)
    if len(entries) != 1:
        print("usage: python -m attnscope describe [--backend cpu|cuda] python:ENTRY | --adapters", file=sys.stderr)
        return 2
    print("ATTNSCOPE_DESCRIBE " + json.dumps(_attnscope.describe(entries[0], backend)), flush=True)
    return 0


def main(argv):
    if argv[:1] == ["describe"]:
        return describe(argv[1:])
    _attnscope.set_worker_interpreter(sys.executable)
    return _attnscope.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
