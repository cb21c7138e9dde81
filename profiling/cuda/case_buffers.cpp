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
  b.pass = p.pass;
  if (has_backward(p.pass)) {
    const std::size_t e = dtype_bytes(p.dtype);
    b.dq = DeviceBuffer(static_cast<std::size_t>(p.q_elems()) * e);
    b.dk = DeviceBuffer(static_cast<std::size_t>(p.k_elems()) * e);
    b.dv = DeviceBuffer(static_cast<std::size_t>(p.v_elems()) * e);
    b.backward_workspace = DeviceBuffer(kernel.backward_workspace_bytes());
  }
  return b;
}

namespace {
void poison_outputs(const CaseBuffers& b, Pass pass, cudaStream_t stream) {
  auto nan = [&](const DeviceBuffer& d) {
    if (d.get()) ATTN_CUDA_CHECK(cudaMemsetAsync(d.get(), 0xFF, d.bytes(), stream));
  };
  if (has_forward(pass)) {
    nan(b.o);
    nan(b.lse);
  }
  if (has_backward(pass)) {
    nan(b.dq);
    nan(b.dk);
    nan(b.dv);
  }
}
}  // namespace

void poison(const CaseBuffers& b, cudaStream_t stream) { poison_outputs(b, b.pass, stream); }

BackwardArgs make_backward_args(const AttentionArgs& args, const void* d_o, const CaseBuffers& b) {
  BackwardArgs a;
  a.q = args.q;
  a.k = args.k;
  a.v = args.v;
  a.o = args.o;
  a.d_o = d_o;
  a.lse = args.lse;
  a.dq = b.dq.get();
  a.dk = b.dk.get();
  a.dv = b.dv.get();
  a.scale = args.scale;
  a.workspace = b.backward_workspace.get();
  a.workspace_bytes = b.backward_workspace.bytes();
  a.stream = args.stream;
  return a;
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
  poison_outputs(b, Pass::fwd, stream);
  kernel.run(args);
  kernel.copy_out(args);
  ATTN_CUDA_CHECK(cudaGetLastError());
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void run_backward_once(PreparedKernel& kernel, const BackwardArgs& args, const CaseBuffers& b) {
  const auto stream = static_cast<cudaStream_t>(args.stream);
  poison_outputs(b, Pass::bwd, stream);
  // The workspace too: a backward that leaves an accumulator there unzeroed (and would be right only
  // on fresh, zeroed memory) fails its check instead of drifting in the timed runs.
  if (b.backward_workspace.get())
    ATTN_CUDA_CHECK(cudaMemsetAsync(b.backward_workspace.get(), 0xFF, b.backward_workspace.bytes(), stream));
  kernel.run_backward(args);
  kernel.copy_out_backward(args);
  ATTN_CUDA_CHECK(cudaGetLastError());
  ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace attn
