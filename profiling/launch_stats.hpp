// Theoretical occupancy of a kernel launch from its resources (registers, shared memory, block
// size) and the SM's limits: the CUDA occupancy calculator's arithmetic, usable for library
// kernels whose function handle we never see (cuBLAS, cuDNN).
#pragma once
#include <cstdint>
#include <optional>

namespace attn {

struct SmLimits {
  int max_warps = 64;                           // per SM
  int max_blocks = 32;                          // per SM
  int regs_per_sm = 65536;                      // 32-bit registers
  int sub_partitions = 4;                       // registers are allocated per SM sub-partition
  int reg_alloc_unit = 256;                     // registers per warp come in these steps
  std::int64_t smem_per_sm = 233472;            // [B] largest carve-out (228 KiB on H100)
  std::int64_t reserved_smem_per_block = 1024;  // [B] the driver's share of each block
};

// [%] resident warps / max_warps when the SM is filled with blocks of this launch. `smem_config`
// is the carve-out the launch ran with (CUPTI's sharedMemoryExecuted); without it the largest.
double theoretical_occupancy_pct(const SmLimits& sm, std::int64_t threads_per_block, int regs_per_thread,
                                 std::int64_t smem_per_block, std::optional<std::int64_t> smem_config);

}  // namespace attn
