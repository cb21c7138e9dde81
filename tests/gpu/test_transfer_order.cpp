// Issue 24 item 9: inputs uploaded with a plain cudaMemcpy (legacy stream, pageable source) were
// not ordered with the engine's non-blocking stream, so a kernel could read the tail of its inputs
// before the last DMA landed. These tests pin the stream-ordered copies and the sweep pattern that
// showed the bug (a large problem freed, then smaller problems checked by cuda.reference).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "profiling/cuda/device_buffer.hpp"
#include "profiling/cuda/transfer.hpp"
#include "reports/jsonl_store.hpp"
#include "tests/gpu/word_copy_kernel.hpp"
#include "tests/support/cli_process.hpp"
#include "tests/support/gpu_probe.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

TEST(TransferOrder, UploadIsVisibleToTheNextCopyOnANonBlockingStream) {
  ATTN_SKIP_WITHOUT_GPU();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  constexpr std::size_t kWords = std::size_t{64} << 20;  // 256 MiB: many staging chunks
  constexpr std::size_t kTail = 16384;                   // the last 64 KiB, copied last by the DMA
  DeviceBuffer dst(kWords * sizeof(std::uint32_t)), probe(kTail * sizeof(std::uint32_t));
  std::vector<std::uint32_t> host(kWords), back(kTail);
  for (std::uint32_t round = 1; round <= 8; ++round) {
    for (std::size_t i = 0; i < kWords; ++i) host[i] = round * 0x9E3779B9u + static_cast<std::uint32_t>(i);
    copy_to_device(dst.get(), host.data(), kWords * sizeof(std::uint32_t), stream);
    // A kernel right after the upload on the same stream must see the new data, never the last round's.
    test::copy_words_on_sms(probe.as<std::uint32_t>(), dst.as<std::uint32_t>() + (kWords - kTail), kTail,
                            stream);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    copy_to_host(back.data(), probe.get(), kTail * 4, stream);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kTail; ++i) wrong += back[i] != host[kWords - kTail + i] ? 1 : 0;
    EXPECT_EQ(wrong, 0u) << "round " << round << ": " << wrong << " of the last " << kTail
                         << " words read stale after copy_to_device";
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// The pattern of the 60-case sweep that reported "cuda.reference disagrees with cpu.reference":
// each large problem frees its buffers, then a smaller one is uploaded into that memory and
// checked against cuda.reference plus sampled cpu.reference rows.
TEST(TransferOrder, SmallProblemsAfterLargeOnesKeepTheirReference) {
  ATTN_SKIP_WITHOUT_GPU();
  const fs::path out = fs::path(::testing::TempDir()) / "attnscope_gpu_transfer_order";
  fs::remove_all(out);
  const CliOutcome o = run_cli(
      "run --backend cuda --quiet --metrics none --max-time-s 0.02 --kernels fa2.mma,cudnn.sdpa "
      "--batch 2 --heads 16 --seq 8192,1024,2048 --head-dim 64,128 --causal 0,1 --out " +
      out.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const LoadedRun run = read_results(out / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 24u);
  for (const CaseResult& c : run.cases) {
    SCOPED_TRACE(c.kernel + " " + c.problem.full_label());
    ASSERT_EQ(c.status, Status::ok) << c.reason;
    ASSERT_TRUE(c.correctness.has_value());
    EXPECT_TRUE(c.correctness->pass);
    ASSERT_TRUE(c.correctness->sampled_rows_rel_l2.has_value());
    EXPECT_LE(*c.correctness->sampled_rows_rel_l2, c.correctness->tol);
  }
}

}  // namespace
}  // namespace attn
