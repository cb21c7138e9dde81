/* attnscope kernel sources: one .cu file, compiled at run time with NVRTC (`attnscope run
 * --kernel-source FILE.cu`), that brings a CUDA attention kernel into attnscope's sweeps with no
 * host code. Tutorial and the full convention: docs/plugins.md ("One .cu file").
 *
 * attnscope compiles the file once per (head_dim, head_dim_v, dtype, knob values) with
 *   -DATTN_HEAD_DIM=<d> -DATTN_HEAD_DIM_V=<dv> -DATTN_DTYPE=<ATTN_FP16|ATTN_BF16|ATTN_FP32>
 *   -DATTN_KNOB_<NAME>=<value>   (every knob the file declares, upper-cased)
 * for the device's architecture (sm_90a on an H100), and launches the entry (default
 * `attn_forward`) as
 *   grid  = (ceil(seq_q / rows_per_block), heads_q, batch), block = threads,
 *   dynamic shared memory = smem_bytes
 * with the numbers the file states with ATTN_LAUNCH, and the arguments (attn_args, attn_problem)
 * by value. A configuration the kernel does not take is refused at compile time with
 *   #error attnscope-unsupported: head_dim must be 64 or 128
 * which makes the case `skipped` with that reason; any other compile error stops the run and is
 * reported as FILE:LINE:COL. */
#ifndef ATTNSCOPE_KERNEL_SOURCE_H
#define ATTNSCOPE_KERNEL_SOURCE_H

#include "attnscope/plugin.h"

/* Values of ATTN_DTYPE (the preprocessor cannot compare enumerators). */
#define ATTN_FP16 0
#define ATTN_BF16 1
#define ATTN_FP32 2

/* The launch a kernel source states: read by attnscope from the compiled module. */
typedef struct {
  int32_t threads;        /* threads per block */
  int32_t rows_per_block; /* query rows per block: grid.x = ceil(seq_q / rows_per_block) */
  int32_t smem_bytes;     /* dynamic shared memory per block (above 48 KiB is allowed) */
  int32_t reserved;       /* 0 */
} attn_source_launch;

#define ATTN_LAUNCH_SYMBOL "attnscope_launch"

#ifdef __cplusplus
#define ATTN_SOURCE_EXTERN_C extern "C"
#else
#define ATTN_SOURCE_EXTERN_C
#endif

/* States the launch, once per file, at file scope. */
#define ATTN_LAUNCH(threads, rows_per_block, smem_bytes)                                                    \
  ATTN_SOURCE_EXTERN_C __device__ const attn_source_launch attnscope_launch = {(threads), (rows_per_block), \
                                                                               (smem_bytes), 0}

#endif /* ATTNSCOPE_KERNEL_SOURCE_H */
