/* A CPU attention kernel as an attnscope plug-in, in plain C (docs/plugins.md walks through it).
 * It registers "example.naive_c": fp32, any head dims, causal masks and windows, GQA/MQA, Sq != Sk,
 * LSE written, one query row at a time with an online softmax; and its backward (ABI version 2),
 * which recomputes P from the forward's LSE, as FlashAttention does. Build: CMake builds it as
 * libattnscope_example_cpu.so; by hand: cc -O2 -shared -fPIC -I<attnscope>/include cpu_naive.c.
 * Use: attnscope run --backend cpu --plugin libattnscope_example_cpu.so --kernels example.naive_c,... */
#include <math.h>
#include <stdlib.h>

#include "attnscope/plugin.h"

typedef struct {
  attn_problem p;
} naive_state;

/* The keys query i sees: [first, last), as the header defines the mask. */
static void visible(const attn_problem* p, int64_t i, int64_t* first, int64_t* last) {
  const int64_t diag = i + p->seq_kv - p->seq_q;
  int64_t lo = 0, hi = p->seq_kv;
  if (p->causal && diag + 1 < hi) hi = diag + 1;
  if (p->window_left >= 0 && diag - p->window_left > lo) lo = diag - p->window_left;
  if (p->window_right >= 0 && diag + p->window_right + 1 < hi) hi = diag + p->window_right + 1;
  *first = lo;
  *last = hi;
}

static const char* why_not(const attn_problem* p, const attn_knob* knobs, int32_t n_knobs) {
  (void)knobs;
  (void)n_knobs;
  if (p->dtype != ATTN_DTYPE_FP32) return "dtype: example.naive_c computes fp32 only";
  if (p->layout != ATTN_LAYOUT_BSHD) return "layout: example.naive_c reads BSHD only";
  return NULL;
}

static int prepare(const attn_problem* p, const attn_knob* knobs, int32_t n_knobs, void** state,
                   const char** error) {
  (void)knobs;
  (void)n_knobs;
  naive_state* s = (naive_state*)malloc(sizeof(naive_state));
  if (!s) {
    *error = "out of host memory";
    return 1;
  }
  s->p = *p;
  *state = s;
  return 0;
}

static int run(void* state, const attn_args* a, const char** error) {
  const attn_problem* p = &((const naive_state*)state)->p;
  const float* q = (const float*)a->q;
  const float* k = (const float*)a->k;
  const float* v = (const float*)a->v;
  float* o = (float*)a->o;
  double* acc = (double*)malloc(sizeof(double) * (size_t)p->head_dim_v);
  if (!acc) {
    *error = "out of host memory";
    return 1;
  }
  const int64_t group = p->heads_q / p->heads_kv;
  for (int64_t b = 0; b < p->batch; ++b)
    for (int64_t h = 0; h < p->heads_q; ++h)
      for (int64_t i = 0; i < p->seq_q; ++i) {
        const float* qi = q + b * p->q_strides[0] + i * p->q_strides[1] + h * p->q_strides[2];
        float* oi = o + b * p->o_strides[0] + i * p->o_strides[1] + h * p->o_strides[2];
        int64_t first, last;
        visible(p, i, &first, &last);
        double m = -INFINITY, l = 0;
        for (int64_t d = 0; d < p->head_dim_v; ++d) acc[d] = 0;
        for (int64_t j = first; j < last; ++j) {
          const float* kj = k + b * p->k_strides[0] + j * p->k_strides[1] + (h / group) * p->k_strides[2];
          const float* vj = v + b * p->v_strides[0] + j * p->v_strides[1] + (h / group) * p->v_strides[2];
          double s = 0;
          for (int64_t d = 0; d < p->head_dim; ++d) s += (double)qi[d] * kj[d];
          s *= p->scale;
          const double m_new = s > m ? s : m;
          const double corr = exp(m - m_new), e = exp(s - m_new);
          l = l * corr + e;
          for (int64_t d = 0; d < p->head_dim_v; ++d) acc[d] = acc[d] * corr + e * vj[d];
          m = m_new;
        }
        for (int64_t d = 0; d < p->head_dim_v; ++d) oi[d] = l > 0 ? (float)(acc[d] / l) : 0.0f;
        if (a->lse) a->lse[(b * p->heads_q + h) * p->seq_q + i] = l > 0 ? (float)(m + log(l)) : -INFINITY;
      }
  free(acc);
  return 0;
}

/* dQ, dK, dV from the forward's O and LSE: per query row, P_ij = exp(s_ij - LSE_i),
 * D_i = dO_i . O_i, dS_ij = P_ij (dO_i . V_j - D_i) * scale; dQ_i = sum_j dS_ij K_j, and dK_j, dV_j
 * gather dS_ij Q_i and P_ij dO_i over every query (of every head of the KV group) that sees key j. */
static int run_backward(void* state, const attn_backward_args* a, const char** error) {
  const attn_problem* p = &((const naive_state*)state)->p;
  const float *q = (const float*)a->q, *k = (const float*)a->k, *v = (const float*)a->v;
  const float *o = (const float*)a->o, *d_o = (const float*)a->d_o;
  float *dq = (float*)a->dq, *dk = (float*)a->dk, *dv = (float*)a->dv;
  double* dq_row = (double*)malloc(sizeof(double) * (size_t)p->head_dim);
  if (!dq_row) {
    *error = "out of host memory";
    return 1;
  }
  const int64_t group = p->heads_q / p->heads_kv;
  for (int64_t b = 0; b < p->batch; ++b)
    for (int64_t j = 0; j < p->seq_kv; ++j)
      for (int64_t hk = 0; hk < p->heads_kv; ++hk) {
        float* dkj = dk + b * p->k_strides[0] + j * p->k_strides[1] + hk * p->k_strides[2];
        float* dvj = dv + b * p->v_strides[0] + j * p->v_strides[1] + hk * p->v_strides[2];
        for (int64_t d = 0; d < p->head_dim; ++d) dkj[d] = 0.0f;
        for (int64_t d = 0; d < p->head_dim_v; ++d) dvj[d] = 0.0f;
      }
  for (int64_t b = 0; b < p->batch; ++b)
    for (int64_t h = 0; h < p->heads_q; ++h)
      for (int64_t i = 0; i < p->seq_q; ++i) {
        const int64_t hk = h / group;
        const float* qi = q + b * p->q_strides[0] + i * p->q_strides[1] + h * p->q_strides[2];
        const float* oi = o + b * p->o_strides[0] + i * p->o_strides[1] + h * p->o_strides[2];
        const float* doi = d_o + b * p->o_strides[0] + i * p->o_strides[1] + h * p->o_strides[2];
        float* dqi = dq + b * p->q_strides[0] + i * p->q_strides[1] + h * p->q_strides[2];
        const double lse = a->lse[(b * p->heads_q + h) * p->seq_q + i];
        double row_dot = 0;
        for (int64_t d = 0; d < p->head_dim_v; ++d) row_dot += (double)doi[d] * oi[d];
        for (int64_t d = 0; d < p->head_dim; ++d) dq_row[d] = 0;
        int64_t first, last;
        visible(p, i, &first, &last);
        for (int64_t j = first; j < last; ++j) {
          const float* kj = k + b * p->k_strides[0] + j * p->k_strides[1] + hk * p->k_strides[2];
          const float* vj = v + b * p->v_strides[0] + j * p->v_strides[1] + hk * p->v_strides[2];
          float* dkj = dk + b * p->k_strides[0] + j * p->k_strides[1] + hk * p->k_strides[2];
          float* dvj = dv + b * p->v_strides[0] + j * p->v_strides[1] + hk * p->v_strides[2];
          double s = 0, dp = 0;
          for (int64_t d = 0; d < p->head_dim; ++d) s += (double)qi[d] * kj[d];
          for (int64_t d = 0; d < p->head_dim_v; ++d) dp += (double)doi[d] * vj[d];
          const double pij = exp(s * p->scale - lse);
          const double ds = pij * (dp - row_dot) * p->scale;
          for (int64_t d = 0; d < p->head_dim; ++d) {
            dq_row[d] += ds * kj[d];
            dkj[d] += (float)(ds * qi[d]);
          }
          for (int64_t d = 0; d < p->head_dim_v; ++d) dvj[d] += (float)(pij * doi[d]);
        }
        for (int64_t d = 0; d < p->head_dim; ++d) dqi[d] = (float)dq_row[d];
      }
  free(dq_row);
  return 0;
}

static void destroy(void* state) { free(state); }

static const attn_kernel kKernels[] = {{
    .id = "example.naive_c",
    .description = "plug-in example: naive fp32 CPU attention in C, online softmax, LSE",
    .backend = ATTN_BACKEND_CPU,
    .knobs = NULL,
    .n_knobs = 0,
    .writes_lse = 1,
    .why_not = why_not,
    .prepare = prepare,
    .run = run,
    .destroy = destroy,
    .workspace_bytes = NULL,
    .stated_rel_l2 = 0,
}};

/* One entry per kernel, in order; why_not NULL: the backward takes what the forward takes. */
static const attn_kernel_backward kBackward[] = {
    {.why_not = NULL, .run = run_backward, .workspace_bytes = NULL}};

static const attn_plugin kPlugin = {ATTNSCOPE_PLUGIN_ABI_VERSION, "attnscope example (C, CPU)", 1, kKernels,
                                    kBackward};

const attn_plugin* attnscope_plugin(void) { return &kPlugin; }
