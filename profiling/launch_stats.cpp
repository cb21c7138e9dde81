// Occupancy arithmetic (see launch_stats.hpp).
#include "profiling/launch_stats.hpp"

#include <algorithm>

namespace attn {

double theoretical_occupancy_pct(const SmLimits& sm, std::int64_t threads_per_block, int regs_per_thread,
                                 std::int64_t smem_per_block, std::optional<std::int64_t> smem_config) {
  if (threads_per_block <= 0 || sm.max_warps <= 0) return 0.0;
  const std::int64_t warps_per_block = (threads_per_block + 31) / 32;
  std::int64_t blocks = std::min<std::int64_t>(sm.max_blocks, sm.max_warps / warps_per_block);
  if (regs_per_thread > 0) {
    const std::int64_t per_warp = (static_cast<std::int64_t>(regs_per_thread) * 32 + sm.reg_alloc_unit - 1) /
                                  sm.reg_alloc_unit * sm.reg_alloc_unit;
    const std::int64_t warps_by_regs = (sm.regs_per_sm / sm.sub_partitions / per_warp) * sm.sub_partitions;
    blocks = std::min(blocks, warps_by_regs / warps_per_block);
  }
  const std::int64_t smem_avail = smem_config && *smem_config > 0 ? *smem_config : sm.smem_per_sm;
  const std::int64_t smem_block = smem_per_block + sm.reserved_smem_per_block;
  if (smem_block > 0) blocks = std::min(blocks, smem_avail / smem_block);
  blocks = std::max<std::int64_t>(blocks, 0);
  return 100.0 * static_cast<double>(blocks * warps_per_block) / sm.max_warps;
}

}  // namespace attn
