/* Versions of one plug-in kernel, `test.versioned`, for the GUI's hot-reload test: the C example's
 * attention under another id, built as VERSION 1 and 2 (different bytes, same results) and as a
 * WRONG version whose output is off by half, which must fail the check. */
#define attnscope_plugin example_attnscope_plugin
#include "../../examples/plugins/cpu_naive.c"
#undef attnscope_plugin

#ifndef VERSION
#define VERSION 1
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

static int versioned_run(void* state, const attn_args* a, const char** error) {
  const int rc = run(state, a, error);
#ifdef WRONG
  const attn_problem* p = &((const naive_state*)state)->p;
  float* o = (float*)a->o;
  const int64_t n = p->batch * p->seq_q * p->heads_q * p->head_dim_v;
  for (int64_t i = 0; i < n; ++i) o[i] *= 1.5f;
#endif
  return rc;
}

static const attn_kernel kVersioned[] = {{
    .id = "test.versioned",
    .description = "hot-reload test kernel, version " STR(VERSION),
    .backend = ATTN_BACKEND_CPU,
    .writes_lse = 1,
    .why_not = why_not,
    .prepare = prepare,
    .run = versioned_run,
    .destroy = destroy,
}};

/* A version 1 table (no backward): the loader still reads that layout. */
static const attn_plugin kVersionedPlugin = {1u, "hot-reload test", 1, kVersioned};

const attn_plugin* attnscope_plugin(void) { return &kVersionedPlugin; }
