/* Plug-ins that must be refused, one per build flag (tests/app/test_plugins.cpp): BAD_ABI (another
 * ABI version), NO_ENTRY (no attnscope_plugin symbol), DUP_ID (an id a built-in kernel has),
 * NULL_RUN (a required function left NULL), BWD_NO_LSE (a backward whose forward writes no LSE). CRASH builds
 * a valid plug-in whose run kills its process (SIGSEGV), which must cost its cases (`fault`) and nothing
 * else. */
#include <signal.h>
#include <stddef.h>

#include "attnscope/plugin.h"

static int prepare(const attn_problem* p, const attn_knob* k, int32_t n, void** state, const char** error) {
  (void)p, (void)k, (void)n, (void)error;
  *state = NULL;
  return 0;
}
static int run(void* state, const attn_args* a, const char** error) {
  (void)state, (void)a, (void)error;
#if defined(CRASH)
  raise(SIGSEGV);
#endif
  return 0;
}
static void destroy(void* state) { (void)state; }

#if defined(DUP_ID)
#define KERNEL_ID "cpu.reference"
#elif defined(CRASH)
#define KERNEL_ID "crash.segv"
#else
#define KERNEL_ID "bad.kernel"
#endif
#if defined(NULL_RUN)
#define RUN_FN NULL
#else
#define RUN_FN run
#endif
#if defined(BAD_ABI)
#define ABI 99u
#else
#define ABI ATTNSCOPE_PLUGIN_ABI_VERSION
#endif

static const attn_kernel kKernels[] = {{KERNEL_ID, "a plug-in attnscope must refuse", ATTN_BACKEND_CPU, NULL,
                                        0, 0, NULL, prepare, RUN_FN, destroy, NULL, 0}};
#if defined(BWD_NO_LSE)
static int run_backward(void* state, const attn_backward_args* a, const char** error) {
  (void)state, (void)a, (void)error;
  return 0;
}
static const attn_kernel_backward kBackward[] = {{NULL, run_backward, NULL}};
#define BACKWARD kBackward
#else
#define BACKWARD NULL
#endif
static const attn_plugin kPlugin = {ABI, "bad", 1, kKernels, BACKWARD};

#if !defined(NO_ENTRY)
const attn_plugin* attnscope_plugin(void) { return &kPlugin; }
#else
const attn_plugin* some_other_name(void) { return &kPlugin; }
#endif
