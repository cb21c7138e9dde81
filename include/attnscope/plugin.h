/* attnscope plug-in ABI, version 2 (version 1 libraries still load): a shared library that brings
 * attention kernels into attnscope's sweeps (the same check, timing, metrics, isolation and reports
 * as the built-in kernels).
 *
 * A plug-in exports one C function, `attnscope_plugin`, returning a table of kernels that lives as
 * long as the library is loaded. Plain C: usable from C, C++ and CUDA. Field-by-field reference and
 * a tutorial: docs/plugins.md. Load one with `attnscope run --plugin PATH` (or ATTNSCOPE_PLUGIN_PATH).
 *
 * Rules every function must keep:
 * - no function may throw across the ABI (C++ plug-ins catch everything and return an error code);
 * - strings a plug-in returns (reasons, error messages) stay valid until its next call from the same
 *   thread: static or thread-local storage owned by the plug-in;
 * - `run` enqueues on `args->stream` (CUDA) and must not synchronise; a CPU `run` computes to
 *   completion; `run` is idempotent (it computes O and LSE from Q, K, V alone), so it can be timed
 *   and replayed any number of times. */
#ifndef ATTNSCOPE_PLUGIN_H
#define ATTNSCOPE_PLUGIN_H

#if defined(__CUDACC_RTC__)
/* NVRTC (kernel sources, attnscope/kernel_source.h) has no C library headers. */
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
#else
#include <stddef.h>
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ATTNSCOPE_PLUGIN_ABI_VERSION 2u
/* The oldest table layout attnscope still reads: version 1 has no `backward` in attn_plugin. */
#define ATTNSCOPE_PLUGIN_ABI_MIN_VERSION 1u
#define ATTNSCOPE_PLUGIN_ENTRY "attnscope_plugin"

typedef enum { ATTN_DTYPE_FP16 = 0, ATTN_DTYPE_BF16 = 1, ATTN_DTYPE_FP32 = 2 } attn_dtype;
typedef enum { ATTN_BACKEND_CPU = 0, ATTN_BACKEND_CUDA = 1 } attn_backend;
typedef enum { ATTN_LAYOUT_BSHD = 0 } attn_layout;
typedef enum { ATTN_PASS_FWD = 0, ATTN_PASS_BWD = 1, ATTN_PASS_FWD_BWD = 2 } attn_pass;

/* One attention problem. Element strides are in elements of `dtype`, for the index order
 * (batch, sequence, head, dim): with the BSHD layout q_strides = {seq_q*heads_q*head_dim,
 * heads_q*head_dim, head_dim, 1}. Query i sees key j iff j lies in [first(i), last(i)): causal masks
 * are bottom-right aligned (i + seq_kv - seq_q >= j), windows keep window_left keys left and
 * window_right keys right of that diagonal (-1 = unbounded). LSE is [batch, heads_q, seq_q] fp32,
 * natural log. GQA: query head h reads key/value head h / (heads_q / heads_kv). */
typedef struct {
  int64_t batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, head_dim_v;
  int32_t dtype;  /* attn_dtype */
  int32_t causal; /* 0 or 1 */
  int64_t window_left, window_right;
  int32_t layout; /* attn_layout */
  float scale;    /* softmax scale, 1/sqrt(head_dim) unless the caller says otherwise */
  int64_t q_strides[4], k_strides[4], v_strides[4], o_strides[4];
  /* Version 2: which pass the case measures (attn_pass), so `prepare` knows whether the backward
   * will run. dO has O's strides; dQ, dK, dV have those of Q, K, V. */
  int32_t pass;
} attn_problem;

/* A knob set for one prepared instance: each knob the kernel declares, with its value (0 = the
 * kernel's default). */
typedef struct {
  const char* name;
  int32_t value;
} attn_knob;

/* A knob the kernel declares: its compiled choices and default. */
typedef struct {
  const char* name;
  const int32_t* values;
  int32_t n_values;
  int32_t default_value;
  const char* help;
} attn_knob_spec;

/* Buffers of one run: device pointers for CUDA kernels, host pointers for CPU ones. `lse` is NULL
 * when the kernel does not write LSE (writes_lse = 0); `stream` is a cudaStream_t for CUDA. */
typedef struct {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  void* workspace;
  size_t workspace_bytes;
  void* stream;
} attn_args;

typedef struct {
  const char* id;          /* "family.variant", lower case, unique among every loaded kernel */
  const char* description; /* one line */
  int32_t backend;         /* attn_backend */
  const attn_knob_spec* knobs;
  int32_t n_knobs;
  int32_t writes_lse; /* 1: run writes args->lse */
  /* NULL when the kernel takes the problem, else why not (naming the field): the case is `skipped`. */
  const char* (*why_not)(const attn_problem* p, const attn_knob* knobs, int32_t n_knobs);
  /* Builds the state of one (problem, knobs) instance outside the timed region. 0 = ok; else an error
   * code with *error set: the case is `error` with that message. */
  int (*prepare)(const attn_problem* p, const attn_knob* knobs, int32_t n_knobs, void** state,
                 const char** error);
  /* One attention on `args`; 0 = ok, else an error code with *error set. */
  int (*run)(void* state, const attn_args* args, const char** error);
  void (*destroy)(void* state);
  /* Optional (NULL = 0): scratch bytes the engine allocates and passes as args->workspace. */
  size_t (*workspace_bytes)(void* state);
  /* Optional (0 = none): the rel L2 error the kernel states for itself (fp16 accumulation, ...); the
   * check then holds it to this instead of the dtype bound. */
  double stated_rel_l2;
} attn_kernel;

/* Buffers of one backward (version 2): Q, K, V, the forward's O and LSE (written by this kernel's
 * `run` on the same state), the incoming gradient dO; the kernel writes every element of dQ, dK
 * and dV (dtype of Q; with GQA dK and dV sum over the query heads of a group; rows that see no key
 * contribute nothing). Any zeroing of an accumulator in `workspace` is the kernel's own work. */
typedef struct {
  const void* q;
  const void* k;
  const void* v;
  const void* o;
  const void* d_o;
  const float* lse;
  void* dq;
  void* dk;
  void* dv;
  void* workspace;
  size_t workspace_bytes;
  void* stream;
} attn_backward_args;

/* A kernel's backward (version 2), at the same index as its attn_kernel. `run` NULL: the kernel has
 * none, and its bwd and fwd+bwd cases are skipped with that reason. */
typedef struct {
  /* NULL when the backward takes every problem the forward takes, else why not (naming the field). */
  const char* (*why_not)(const attn_problem* p, const attn_knob* knobs, int32_t n_knobs);
  /* One backward on `args`, enqueued like `run`; idempotent. 0 = ok, else an error code with *error set. */
  int (*run)(void* state, const attn_backward_args* args, const char** error);
  /* Optional (NULL = 0): scratch bytes passed as args->workspace. */
  size_t (*workspace_bytes)(void* state);
} attn_kernel_backward;

typedef struct {
  uint32_t abi_version; /* ATTNSCOPE_PLUGIN_ABI_VERSION */
  const char* name;     /* the plug-in's name, for listings */
  int32_t n_kernels;
  const attn_kernel* kernels;
  /* Version 2, optional: NULL, or n_kernels backward entries, one per kernel in the same order. */
  const attn_kernel_backward* backward;
} attn_plugin;

/* The entry point every plug-in exports. */
typedef const attn_plugin* (*attn_plugin_entry)(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTNSCOPE_PLUGIN_H */
