// Engine buffers as DLPack producers: an object with __dlpack__ and __dlpack_device__ that
// torch.from_dlpack and numpy.from_dlpack turn into a tensor over the same memory (no copy).
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

#include "kernels/api/dtype.hpp"

namespace attn::python {

// Registers the view type on the module (once, at import).
void register_dlpack_view(pybind11::module_& m);

// A view of `data` (row-major, contiguous, `shape`) in `dtype` on the host (cpu) or on CUDA device
// 0 of this process (cuda). The memory must outlive every tensor made from the view.
pybind11::object dlpack_view(void* data, const std::vector<std::int64_t>& shape, DType dtype,
                             Backend backend);

// A writable NumPy float32 array over host memory (no copy): the CPU backend's tensors. NumPy's
// from_dlpack marks arrays from unversioned DLPack capsules read-only, and a kernel writes `out`.
pybind11::object host_array(float* data, const std::vector<std::int64_t>& shape);

}  // namespace attn::python
