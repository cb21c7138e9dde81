#!/usr/bin/env python3
"""Writes a synthetic results file for GUI frame-time measurements (docs/gui.md):
4 kernels x 5 head dims x 200 sequence lengths = 20 series x 200 points, made from the H100
example's records with smooth made-up TFLOPS (not measurements).

usage: tools/gen_20x200.py OUT.jsonl [WALL_S_PER_CASE]   (wall time per case sets --replay pace)
"""
import copy, hashlib, json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, '..', 'docs', 'examples', 'h100-fa2-tokens16k.jsonl')).read().splitlines()
run = json.loads(src[0]); tmpl = json.loads(src[1])
run['run_id'] = 'synthetic-20x200'
out = [json.dumps(run)]
wall = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
for ki, k in enumerate(['fa2.mma', 'cudnn.sdpa', 'cublas.unfused', 'naive.unfused']):
    for di, d in enumerate([32, 64, 96, 128, 256]):
        for i in range(200):
            s = 64 + 32 * i
            c = copy.deepcopy(tmpl)
            c['kernel'] = k; c['knobs'] = {}
            p = c['problem']; p.update(batch=2, heads_q=16, heads_kv=16, seq_q=s, seq_kv=s, head_dim=d, head_dim_v=d)
            flops = 4.0 * 2 * 16 * s * s * d
            tf = (100 + 150 * ki + 2 * di) * (1 - 1 / (1 + s / 512))
            ms = flops / (tf * 1e12) * 1e3
            c['flops'] = flops; c['tflops'] = tf
            c['timing'].update(median_ms=ms, min_ms=ms * .98, max_ms=ms * 1.05, mean_ms=ms, q1_ms=ms, q3_ms=ms, std_ms=ms * .01)
            c['min_bytes'] = 2 * 2 * 16 * s * d * 4
            c['metrics']['dram_bytes'] = c['min_bytes'] * (1.5 + ki)
            c.pop('roofline', None); c.pop('ncu_command', None); c.pop('nvtx_range', None)
            c['wall_s'] = wall
            c['case_id'] = hashlib.sha1(f'{k}{d}{s}'.encode()).hexdigest()[:16]
            out.append(json.dumps(c))
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
