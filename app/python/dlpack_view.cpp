// DLPack views of engine buffers (dlpack_view.hpp).
#include "app/python/dlpack_view.hpp"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <memory>
#include <stdexcept>

namespace attn::python {

namespace py = pybind11;

namespace {

struct View {
  void* data = nullptr;
  std::vector<std::int64_t> shape;
  DLDataType dtype{};
  DLDevice device{};
};

// What a capsule owns until its consumer's deleter runs.
struct Managed {
  DLManagedTensor tensor{};
  std::vector<std::int64_t> shape, strides;
};

DLDataType dl_type(DType t) {
  switch (t) {
    case DType::fp16:
      return {kDLFloat, 16, 1};
    case DType::bf16:
      return {kDLBfloat, 16, 1};
    case DType::fp32:
      return {kDLFloat, 32, 1};
  }
  throw std::logic_error("dl_type: unknown dtype");
}

// A fresh "dltensor" capsule over the view (each consumer takes one and renames it when it does).
py::capsule make_capsule(const View& v) {
  auto m = std::make_unique<Managed>();
  m->shape = v.shape;
  m->strides.assign(v.shape.size(), 1);
  for (std::size_t i = v.shape.size(); i-- > 1;) m->strides[i - 1] = m->strides[i] * v.shape[i];
  DLTensor& t = m->tensor.dl_tensor;
  t.data = v.data;
  t.device = v.device;
  t.ndim = static_cast<int32_t>(v.shape.size());
  t.dtype = v.dtype;
  t.shape = m->shape.data();
  t.strides = m->strides.data();
  t.byte_offset = 0;
  m->tensor.manager_ctx = m.get();
  m->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<Managed*>(self->manager_ctx); };
  // An unconsumed capsule still carries its name and frees what it holds; a consumed one was renamed
  // "used_dltensor" and its consumer calls the deleter.
  PyObject* cap = PyCapsule_New(&m->tensor, "dltensor", [](PyObject* c) {
    if (!PyCapsule_IsValid(c, "dltensor")) return;
    auto* held = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
    if (held && held->deleter) held->deleter(held);
  });
  if (!cap) throw py::error_already_set();
  m.release();
  return py::reinterpret_steal<py::capsule>(cap);
}

}  // namespace

void register_dlpack_view(py::module_& m) {
  py::class_<View>(m, "DLPackView",
                   "An engine buffer as a DLPack producer: pass it to torch.from_dlpack or numpy.from_dlpack")
      .def("__dlpack__", [](const View& v, const py::args&, const py::kwargs&) { return make_capsule(v); })
      .def("__dlpack_device__",
           [](const View& v) {
             return py::make_tuple(static_cast<int>(v.device.device_type), v.device.device_id);
           })
      .def_property_readonly("shape", [](const View& v) { return py::tuple(py::cast(v.shape)); });
}

py::object dlpack_view(void* data, const std::vector<std::int64_t>& shape, DType dtype, Backend backend) {
  View v;
  v.data = data;
  v.shape = shape;
  v.dtype = dl_type(dtype);
  v.device = backend == Backend::cuda ? DLDevice{kDLCUDA, 0} : DLDevice{kDLCPU, 0};
  return py::cast(std::move(v));
}

py::object host_array(float* data, const std::vector<std::int64_t>& shape) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end()), strides(shape.size(), sizeof(float));
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  // A base that is not an array keeps the memory ours (the capsule frees nothing) and the array writable.
  const py::capsule base(data, [](void*) {});
  return py::array(py::dtype::of<float>(), dims, strides, data, base);
}

}  // namespace attn::python
