// The conformance matrix every registered kernel is checked over (tests/gpu/test_conformance.cpp
// on the GPU, tests/kernels/test_conformance_cpu.cpp on the CPU): odd sequence lengths (1, 17, 130,
// 257), GQA and MQA, causal, sliding windows, Sq != Sk both ways, several head dims, in each dtype
// given. Each case runs through the engine itself (make_engine), so it is checked by the engine's
// rule (profiling/engine/check.*) against its reference; a kernel's why_not refusals are skips.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/registry.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/sweep/variant.hpp"

namespace attn::test {

struct ConformanceCase {
  std::string name;
  Problem problem;
};

inline Problem conformance_problem(std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t sk,
                                   std::int64_t d, DType t, bool causal = false, Window w = {}) {
  Problem p;
  p.batch = 2;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seq_q = sq;
  p.seq_kv = sk;
  p.head_dim = p.head_dim_v = d;
  p.dtype = t;
  p.causal = causal;
  p.window = w;
  return p;
}

// NSA's compressed branch over Sq queries: blocks of l at stride d, Sk = the blocks of the sequence.
inline Problem compressed_problem(std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t l,
                                  std::int64_t stride, std::int64_t d, DType t) {
  Problem p = conformance_problem(hq, hkv, sq, 1, d, t);
  p.compress = {l, stride};
  p.seq_kv = p.compress.blocks_at(sq - 1);
  return p;
}

// A variable-length batch of these lengths (Sq = Sk per sequence).
inline Problem varlen_problem(std::int64_t hq, std::int64_t hkv, std::vector<std::int64_t> lengths,
                              std::int64_t d, DType t, bool causal = false, Window w = {}) {
  const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  Problem p = conformance_problem(hq, hkv, longest, longest, d, t, causal, w);
  p.batch = static_cast<std::int64_t>(lengths.size());
  p.varlen.q = lengths;
  p.varlen.kv = std::move(lengths);
  return p;
}

// NSA's compressed branch of a varlen batch: each sequence's keys are its own blocks.
inline Problem compressed_varlen_problem(std::int64_t hq, std::int64_t hkv, std::vector<std::int64_t> lengths,
                                         Compress c, std::int64_t d, DType t) {
  Problem p = varlen_problem(hq, hkv, std::move(lengths), d, t);
  p.compress = c;
  for (std::int64_t& kv : p.varlen.kv) kv = c.key_rows(kv);
  p.seq_kv = *std::max_element(p.varlen.kv.begin(), p.varlen.kv.end());
  return p;
}

// NSA's selected branch over S tokens: query blocks of l' rows see n of their causal key blocks.
inline Problem selected_problem(std::int64_t hq, std::int64_t hkv, std::int64_t s, Select sel, std::int64_t d,
                                DType t) {
  Problem p = conformance_problem(hq, hkv, s, s, d, t);
  p.select = sel;
  return p;
}

inline std::vector<ConformanceCase> conformance_matrix(const std::vector<DType>& dtypes) {
  std::vector<ConformanceCase> out;
  for (DType t : dtypes) {
    const std::string dt(to_string(t));
    auto add = [&](const std::string& name, const Problem& p) { out.push_back({name + "_" + dt, p}); };
    add("s1", conformance_problem(4, 4, 1, 1, 64, t));
    add("s17", conformance_problem(4, 4, 17, 17, 64, t));
    add("s130", conformance_problem(4, 4, 130, 130, 64, t));
    add("s257", conformance_problem(4, 4, 257, 257, 64, t));
    add("s17_causal", conformance_problem(4, 4, 17, 17, 64, t, true));
    add("s257_causal", conformance_problem(4, 4, 257, 257, 64, t, true));
    add("gqa42_s130_causal", conformance_problem(4, 2, 130, 130, 64, t, true));
    add("mqa41_s257", conformance_problem(4, 1, 257, 257, 64, t));
    add("sq17_sk130_causal", conformance_problem(4, 2, 17, 130, 64, t, true));
    add("sq257_sk130_causal", conformance_problem(4, 4, 257, 130, 64, t, true));  // 127 rows see no key
    add("sq1_sk257_decode", conformance_problem(4, 1, 1, 257, 64, t, true));
    add("win16_0_s257", conformance_problem(4, 4, 257, 257, 64, t, false, {16, 0}));
    add("win32_32_sq130_sk257", conformance_problem(4, 2, 130, 257, 64, t, false, {32, 32}));
    add("causal_win8_s130", conformance_problem(4, 4, 130, 130, 64, t, true, {8, -1}));
    add("d128_s130_causal", conformance_problem(4, 2, 130, 130, 128, t, true));
    add("d256_s17", conformance_problem(4, 4, 17, 17, 256, t));
    add("d512_s130_causal", conformance_problem(4, 1, 130, 130, 512, t, true));
    // NSA's compressed branch: the first l - 1 rows see no block; overlapping and disjoint blocks.
    add("cmp32_16_s257", compressed_problem(4, 4, 257, 32, 16, 64, t));
    add("cmp8_4_gqa42_s130", compressed_problem(4, 2, 130, 8, 4, 64, t));
    add("cmp64_64_mqa41_s1000_d128", compressed_problem(4, 1, 1000, 64, 64, 128, t));
    // NSA's selected branch: a partial last query block, GQA groups sharing a draw, blocks below a tile.
    add("sel64x4_gqa42_s1000", selected_problem(4, 2, 1000, {64, 4, 0}, 64, t));
    add("sel128x3s5_mqa41_s513_d128", selected_problem(4, 1, 513, {128, 3, 5}, 128, t));
    add("sel16x3_s130", selected_problem(2, 2, 130, {16, 3, 1}, 32, t));
    // Variable-length batches: lengths 1..257 mixed, GQA, causal and windowed.
    add("varlen_gqa42_causal", varlen_problem(4, 2, {1, 257, 17, 130, 64, 2}, 64, t, true));
    add("varlen_win16_0", varlen_problem(4, 4, {200, 1, 33}, 64, t, false, {16, 0}));
    add("varlen_full_mqa41", varlen_problem(4, 1, {300, 1, 77, 128}, 64, t, false));
    add("varlen_cmp32_16_gqa42", compressed_varlen_problem(4, 2, {20, 300, 77, 1000}, {32, 16}, 64, t));
  }
  return out;
}

// The backward's matrix (issue 20): S 1, 17, 1000 and 4097, Sq != Sk both ways, GQA 32/4, MQA,
// causal, windows (64,0) and (128,128), D 32, 64, 96, 128, 160, 192, 224 and 256, each as a bwd case, plus a
// fwd+bwd one. `full` = false keeps the CPU's share small (S <= 257, D <= 64): the fp64 oracle and
// the CPU kernels run in CI on two cores.
inline std::vector<ConformanceCase> backward_matrix(const std::vector<DType>& dtypes, bool full) {
  std::vector<ConformanceCase> out;
  for (DType t : dtypes) {
    const std::string dt(to_string(t));
    auto add = [&](const std::string& name, Problem p, Pass pass = Pass::bwd) {
      p.pass = pass;
      out.push_back({name + "_" + std::string(to_string(pass)) + "_" + dt, p});
    };
    add("s1", conformance_problem(4, 4, 1, 1, 64, t));
    add("s17_causal", conformance_problem(4, 4, 17, 17, 64, t, true));
    add("s17_causal", conformance_problem(4, 4, 17, 17, 64, t, true), Pass::fwd_bwd);
    if (!full) {
      add("gqa42_s130_causal", conformance_problem(4, 2, 130, 130, 32, t, true));
      add("mqa41_s257", conformance_problem(4, 1, 257, 257, 16, t));
      add("sq17_sk130_causal", conformance_problem(4, 2, 17, 130, 32, t, true));
      add("sq257_sk130_causal", conformance_problem(4, 4, 257, 130, 16, t, true));  // 127 rows see no key
      add("win16_0_s130", conformance_problem(2, 2, 130, 130, 32, t, false, {16, 0}));
      add("win32_32_sq130_sk257", conformance_problem(4, 2, 130, 257, 16, t, false, {32, 32}));
      add("cmp16_8_gqa42_s130", compressed_problem(4, 2, 130, 16, 8, 32, t));
      add("varlen_gqa42_causal", varlen_problem(4, 2, {1, 130, 17, 64}, 32, t, true));
      add("varlen_cmp16_8_gqa42", compressed_varlen_problem(4, 2, {1, 130, 17, 64}, {16, 8}, 32, t));
      continue;
    }
    add("s1000_d128", conformance_problem(4, 4, 1000, 1000, 128, t));
    add("s4097_causal", conformance_problem(4, 4, 4097, 4097, 64, t, true));
    add("gqa32_4_s1000_causal_d128", conformance_problem(32, 4, 1000, 1000, 128, t, true));
    add("mqa8_1_s1000", conformance_problem(8, 1, 1000, 1000, 64, t));
    add("sq17_sk1000_causal", conformance_problem(4, 2, 17, 1000, 64, t, true));
    add("sq1000_sk17_causal", conformance_problem(4, 4, 1000, 17, 64, t, true));  // 983 rows see no key
    add("win64_0_s1000", conformance_problem(4, 4, 1000, 1000, 64, t, false, {64, 0}));
    add("win128_128_s4097_d256", conformance_problem(4, 2, 4097, 4097, 256, t, false, {128, 128}));
    add("d96_s1000_causal", conformance_problem(4, 4, 1000, 1000, 96, t, true));
    add("d32_gqa42_s1000_causal", conformance_problem(4, 2, 1000, 1000, 32, t, true));
    add("d160_s17", conformance_problem(4, 4, 17, 17, 160, t));
    add("d160_gqa42_win128_128_s1000", conformance_problem(4, 2, 1000, 1000, 160, t, false, {128, 128}));
    add("d224_gqa42_s1000_causal", conformance_problem(4, 2, 1000, 1000, 224, t, true));
    add("d224_sq1000_sk17", conformance_problem(4, 4, 1000, 17, 224, t));
    add("d192_gqa42_s1000_causal", conformance_problem(4, 2, 1000, 1000, 192, t, true));
    add("d256_sq17_sk1000_causal", conformance_problem(4, 2, 17, 1000, 256, t, true));
    add("d256_s1000_causal", conformance_problem(4, 4, 1000, 1000, 256, t, true), Pass::fwd_bwd);
    // Lengths that are multiples of 128 (cuDNN <= 9.15's backward takes only those).
    add("s1024_causal_d128", conformance_problem(4, 4, 1024, 1024, 128, t, true));
    add("gqa32_4_s1024_causal", conformance_problem(32, 4, 1024, 1024, 64, t, true));
    add("mqa8_1_s1024_d128", conformance_problem(8, 1, 1024, 1024, 128, t));
    add("sq256_sk1024_causal", conformance_problem(4, 2, 256, 1024, 64, t, true));
    add("win128_128_s2048", conformance_problem(4, 4, 2048, 2048, 64, t, false, {128, 128}));
    add("win64_0_s1024_d96", conformance_problem(4, 4, 1024, 1024, 96, t, false, {64, 0}));
    add("d256_s1024_causal", conformance_problem(4, 4, 1024, 1024, 256, t, true), Pass::fwd_bwd);
    add("cmp32_16_gqa42_s1000_d128", compressed_problem(4, 2, 1000, 32, 16, 128, t));
    add("cmp64_32_s2048", compressed_problem(4, 4, 2048, 64, 32, 64, t), Pass::fwd_bwd);
    // Varlen batches: lengths 1..4097 mixed, each sequence's own diagonal.
    add("varlen_gqa42_causal_d64", varlen_problem(4, 2, {1, 1000, 17, 130, 4097, 64}, 64, t, true));
    add("varlen_full_d128", varlen_problem(4, 4, {300, 1, 77, 1024}, 128, t), Pass::fwd_bwd);
    add("varlen_gqa42_causal_d256", varlen_problem(4, 2, {1, 300, 77, 1000}, 256, t, true));
    add("varlen_win64_0_d224", varlen_problem(4, 4, {1, 300, 77, 1000}, 224, t, false, {64, 0}));
    add("varlen_mqa81_win64_0_d32", varlen_problem(8, 1, {200, 1000, 33}, 32, t, false, {64, 0}));
    add("varlen_cmp32_16_gqa42_d64", compressed_varlen_problem(4, 2, {20, 1000, 257, 64}, {32, 16}, 64, t),
        Pass::fwd_bwd);
  }
  return out;
}

// The kernels of `backend` that declare a backward.
inline std::vector<std::string> registered_backward_kernels(Backend backend) {
  std::vector<std::string> ids;
  for (const KernelSpec& k : kernel_registry())
    if (k.backend == backend && k.backward_why_not) ids.push_back(k.id);
  return ids;
}

// A protocol that checks every case and times it only briefly: conformance is about the check.
inline Protocol conformance_protocol() {
  Protocol p;
  p.warmup_ms = 0;
  p.min_samples = 1;
  p.max_samples = 3;
  p.max_time_s = 0.01;
  p.metrics = "none";
  return p;
}

// The registered kernels of `backend`, by id (the suites' parameters).
inline std::vector<std::string> registered_kernels(Backend backend) {
  std::vector<std::string> ids;
  for (const KernelSpec& k : kernel_registry())
    if (k.backend == backend) ids.push_back(k.id);
  return ids;
}

// The few matrix shapes each knob value is also checked on: a ragged causal GQA square, rows that
// see no key, a two-sided window with Sq < Sk, a tiny odd length.
inline std::vector<ConformanceCase> knob_matrix(const std::vector<DType>& dtypes) {
  std::vector<ConformanceCase> out;
  for (ConformanceCase& c : conformance_matrix(dtypes)) {
    const std::string shape = c.name.substr(0, c.name.rfind('_'));  // less the dtype
    for (const char* keep : {"gqa42_s130_causal", "sq257_sk130_causal", "win32_32_sq130_sk257", "s17"})
      if (shape == keep) out.push_back(std::move(c));
  }
  return out;
}

// Each declared value of each knob that is not its default, one knob at a time.
inline std::vector<Knobs> knob_variants(const KernelSpec& spec) {
  std::vector<Knobs> out;
  for (const KnobSpec& knob : spec.knobs)
    for (int v : knob.values)
      if (v != knob.default_value) out.push_back(Knobs{{knob.name, v}});
  return out;
}

// Runs `kernel` with `knobs` over `cases` on `engine`: every case must be ok or skipped (a
// refusal); each failure is reported with its case and reason. Prints one summary line:
//   [conformance] <variant label>: <n> pass, <n> skip, <n> fail
// and returns how many cases passed and failed (a kernel that took none is all refusals).
struct ConformanceCounts {
  int pass = 0, skip = 0, fail = 0;
  std::string first_refusal;
};

inline ConformanceCounts run_conformance(CaseEngine& engine, const std::string& kernel, const Knobs& knobs,
                                         const std::vector<ConformanceCase>& cases) {
  ConformanceCounts n;
  const std::string label = variant_label(kernel, knobs);
  for (const ConformanceCase& cc : cases) {
    Case c;
    c.kernel = kernel;
    c.knobs = knobs;
    c.problem = cc.problem;
    const CaseResult r = engine.run(c);
    if (r.status == Status::ok) {
      ++n.pass;
      EXPECT_TRUE(r.correctness && r.correctness->pass)
          << label << " " << cc.name << ": ok without a passed check";
      if (has_backward(cc.problem.pass)) {
        EXPECT_TRUE(r.grad_dq && r.grad_dq->pass && r.grad_dk && r.grad_dk->pass && r.grad_dv &&
                    r.grad_dv->pass)
            << label << " " << cc.name << ": ok without passed gradient checks";
      }
    } else if (r.status == Status::skipped) {
      ++n.skip;
      if (n.first_refusal.empty()) n.first_refusal = cc.name + ": " + r.reason;
    } else {
      ++n.fail;
      ADD_FAILURE() << label << " " << cc.name << " (" << cc.problem.full_label()
                    << "): " << to_string(r.status) << ": " << r.reason;
    }
    if (engine.context_lost()) {
      ADD_FAILURE() << "the CUDA context was lost at " << label << " " << cc.name << ": "
                    << engine.context_lost_reason();
      break;
    }
  }
  std::cout << "[conformance] " << label << ": " << n.pass << " pass, " << n.skip << " skip, " << n.fail
            << " fail\n";
  return n;
}

// The whole matrix with the kernel's default knobs; skips the test (naming the first refusal) when
// the kernel took no case at all.
inline void run_conformance(CaseEngine& engine, const std::string& kernel, const std::vector<DType>& dtypes) {
  const ConformanceCounts n = run_conformance(engine, kernel, {}, conformance_matrix(dtypes));
  if (n.pass == 0 && n.fail == 0)
    GTEST_SKIP() << kernel << " refused every conformance case, e.g. " << n.first_refusal;
}

// Every non-default knob value on the knob matrix.
inline void run_knob_conformance(CaseEngine& engine, const std::string& kernel,
                                 const std::vector<DType>& dtypes) {
  const KernelSpec* spec = find_kernel(kernel);
  ASSERT_NE(spec, nullptr) << kernel;
  const std::vector<Knobs> variants = knob_variants(*spec);
  if (variants.empty()) GTEST_SKIP() << kernel << " declares no knobs";
  const std::vector<ConformanceCase> cases = knob_matrix(dtypes);
  int pass = 0, fail = 0;
  for (const Knobs& k : variants) {
    const ConformanceCounts n = run_conformance(engine, kernel, k, cases);
    pass += n.pass;
    fail += n.fail;
    if (engine.context_lost()) return;
  }
  if (pass == 0 && fail == 0) GTEST_SKIP() << kernel << ": every knob variant refused every case";
}

inline std::string kernel_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& ch : name)
    if (ch == '.') ch = '_';
  return name;
}

}  // namespace attn::test
