/* A CPU attention kernel as an attnscope plug-in, in plain C (docs/plugins.md walks through it).
 * It registers "example.naive_c": fp32, any head dims, causal masks and windows, GQA/MQA, Sq != Sk,
 * LSE written, one query row at a time with an online softmax. Build: CMake builds it as
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

static const attn_plugin kPlugin = {ATTNSCOPE_PLUGIN_ABI_VERSION, "attnscope example (C, CPU)", 1, kKernels};

const attn_plugin* attnscope_plugin(void) { return &kPlugin; }
