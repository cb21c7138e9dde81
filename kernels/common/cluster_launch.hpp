// A launch configuration for cudaLaunchKernelEx with a thread-block cluster along x (1: no cluster),
// shared by the kernels that launch clusters (fa3.wgmma, ffpa.wgmma's cluster mode). It owns the
// attribute its config points at, so it is neither copied nor moved.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace attn {

struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster_dims{};

  ClusterLaunch(dim3 grid, dim3 block, std::size_t smem_bytes, cudaStream_t stream, unsigned cluster_x) {
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    cluster_dims.id = cudaLaunchAttributeClusterDimension;
    cluster_dims.val.clusterDim.x = cluster_x;
    cluster_dims.val.clusterDim.y = 1;
    cluster_dims.val.clusterDim.z = 1;
    config.attrs = &cluster_dims;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

}  // namespace attn
