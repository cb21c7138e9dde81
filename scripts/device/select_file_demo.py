"""Writes an NSA-style selected-branch index tensor to a .npy file: per (batch, KV head, query
block of l' rows) the n key blocks with the highest scores among its causal candidates, scores
drawn at random (NSA ranks blocks by the compressed branch's attention; any ranking exercises the
same kernel path). Usage: select_file_demo.py OUT.npy B HKV S L N [SEED]"""
import sys

import numpy as np


def main() -> None:
    out, b, hkv, s, l, n = sys.argv[1], *map(int, sys.argv[2:7])
    rng = np.random.default_rng(int(sys.argv[7]) if len(sys.argv) > 7 else 0)
    nqb = -(-s // l)
    table = np.full((b, hkv, nqb, n), -1, dtype=np.int32)
    for q in range(nqb):
        scores = rng.random((b, hkv, q + 1))
        top = np.argsort(-scores, axis=-1)[..., :n]
        table[..., q, : top.shape[-1]] = top
    np.save(out, table)
    print(f"{out}: {table.shape}, {int((table >= 0).sum())} selected blocks")


if __name__ == "__main__":
    main()
