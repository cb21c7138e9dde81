// Buffers, poison, arguments and typed copies of one kernel run (see case_buffers.hpp).
#include "profiling/cuda/case_buffers.hpp"

#include "profiling/cuda/transfer.hpp"
#include "profiling/engine/inputs.hpp"

namespace attn {

CaseBuffers allocate_case_buffers(const Problem& p, const PreparedKernel& kernel) {
  CaseBuffers b;
  b.o = DeviceBuffer(static_cast<std::size_t>(p.o_elems()) * dtype_bytes(p.dtype));
  if (kernel.writes_lse()) b.lse = DeviceBuffer(static_cast<std::size_t>(p.lse_elems()) * sizeof(float));
  b.workspace = DeviceBuffer(kernel.workspace_bytes());
  return b;
}

void poison(const CaseBuffers& b, cudaStream_t stream) {
  ATTN_CUDA_CHECK(cudaMemsetAsync(b.o.get(), 0xFF, b.o.bytes(), stream));
  if (b.lse.get()) ATTN_CUDA_CHECK(cudaMemsetAsync(b.lse.get(), 0xFF, b.lse.bytes(), stream));
}

AttentionArgs make_args(const Problem& p, const void* q, const void* k, const void* v, const CaseBuffers& b,
                        cudaStream_t stream) {
  AttentionArgs a;
  a.q = q;
  a.k = k;
  a.v = v;
  a.o = b.o.get();
  a.lse = b.lse.as<float>();
  a.scale = static_cast<float>(p.default_scale());
  a.workspace = b.workspace.get();
  a.workspace_bytes = b.workspace.bytes();
  a.stream = stream;
  return a;
}

DeviceBuffer upload(const std::vector<float>& values, DType t, cudaStream_t stream) {
  const std::vector<std::uint8_t> bytes = pack_as(t, values);
  DeviceBuffer d(bytes.size());
  copy_to_device(d.get(), bytes.data(), bytes.size(), stream);
  return d;
}

std::vector<float> download(const DeviceBuffer& b, DType t, std::size_t count, cudaStream_t stream) {
  std::vector<std::uint8_t> bytes(count * dtype_bytes(t));
  copy_to_host(bytes.data(), b.get(), bytes.size(), stream);
  return unpack_from(t, bytes.data(), count);
}

void run_once(PreparedKernel& kernel, const AttentionArgs& args, const CaseBuffers& b) {
  const auto stream = static_cast<cudaStream_t>(args.stream);
  poison(b, stream);
  kernel.run(args);
  ATTN_CUDA_CHECK(cudaGetLastError());
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace attn
