"""Same-run PyTorch SDPA baseline for one attention shape (B,H,S,D fp16/bf16), CUDA-event median.
Usage: python3 torch_sdpa_case.py B H S D [dtype] [causal] [layout]. layout: bhsd (default, each head's
rows contiguous) or bshd (attnscope's layout: rows of all heads interleaved, passed as a transposed
view). Prints one line per backend."""
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

B, H, S, D = (int(x) for x in sys.argv[1:5])
dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[sys.argv[5] if len(sys.argv) > 5 else "fp16"]
causal = len(sys.argv) > 6 and sys.argv[6] == "1"
layout = sys.argv[7] if len(sys.argv) > 7 else "bhsd"
if layout == "bshd":
    q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=dtype).transpose(1, 2) for _ in range(3))
elif layout == "bhsd":
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dtype) for _ in range(3))
else:
    sys.exit(f"layout = {layout}: must be bhsd or bshd")
flops = 4 * B * H * S * S * D * (0.5 if causal else 1.0)
for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
                      ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
    with sdpa_kernel([backend]):
        fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(50):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); fn(); b.record(); b.synchronize()
            times.append(a.elapsed_time(b))
        times.sort()
        ms = times[len(times) // 2]
        print(f"torch.{name} B={B} H={H} S={S} D={D} {sys.argv[5] if len(sys.argv) > 5 else 'fp16'} causal={int(causal)} {layout}: "
              f"median {ms:.4f} ms, {flops / ms / 1e9:.1f} TFLOPS", flush=True)
