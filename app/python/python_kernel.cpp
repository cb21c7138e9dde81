// Python callables as registry entries (python_kernel.hpp). The Python half (attnscope/_kernels.py)
// resolves entries, binds a callable to a case's tensors and copies a returned output into O; this
// half turns those objects into KernelSpec and PreparedKernel and Python errors into kernel errors.
#include "app/python/python_kernel.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <vector>

#include "app/python/dlpack_view.hpp"
#include "kernels/api/plugin_loader.hpp"

namespace attn::python {

namespace py = pybind11;

namespace {

py::module_ kernels_module() { return py::module_::import("attnscope._kernels"); }

py::dict problem_dict(const Problem& p, Backend backend) {
  py::dict d;
  d["batch"] = p.batch;
  d["heads_q"] = p.heads_q;
  d["heads_kv"] = p.heads_kv;
  d["seq_q"] = p.seq_q;
  d["seq_kv"] = p.seq_kv;
  d["head_dim"] = p.head_dim;
  d["head_dim_v"] = p.head_dim_v;
  d["dtype"] = std::string(to_string(p.dtype));
  d["causal"] = p.causal;
  d["window"] = p.window.active() ? py::object(py::make_tuple(p.window.left, p.window.right)) : py::none();
  d["compress"] =
      p.compress.active() ? py::object(py::make_tuple(p.compress.block, p.compress.stride)) : py::none();
  if (p.varlen.active()) {
    py::dict v;
    v["q"] = p.varlen.q;
    v["kv"] = p.varlen.kv;
    d["varlen"] = v;
  } else {
    d["varlen"] = py::none();
  }
  d["scale"] = p.default_scale();
  d["pass"] = std::string(to_string(p.pass));
  d["backend"] = std::string(to_string(backend));
  return d;
}

// Unsupported (from attnscope._kernels) becomes a skip; anything else an error of the case.
[[noreturn]] void rethrow_as_kernel_error(py::error_already_set& e, const std::string& what) {
  if (e.matches(kernels_module().attr("Unsupported")))
    throw Unsupported(py::str(e.value()).cast<std::string>());
  throw KernelError(what + python_error_text(e));
}

// A case's callable bound to its tensors. Every Python object is released with the GIL held.
class PythonKernel final : public PreparedKernel {
 public:
  // `backward` is None for a kernel without one; `writes_lse` as the kernel declares it for `p`.
  PythonKernel(py::object fn, py::object backward, bool writes_lse, const Problem& p, Backend backend)
      : m_fn(std::move(fn)),
        m_backward(std::move(backward)),
        m_writes_lse(writes_lse),
        m_problem(p),
        m_backend(backend) {}
  ~PythonKernel() override {
    py::gil_scoped_acquire gil;
    m_last = py::object();
    m_last_backward = py::object();
    m_bound = py::object();
    m_bound_backward = py::object();
    m_backward = py::object();
    m_fn = py::object();
  }
  bool writes_lse() const override { return m_writes_lse; }
  PythonKernel(const PythonKernel&) = delete;
  PythonKernel& operator=(const PythonKernel&) = delete;

  void run(const AttentionArgs& a) override {
    py::gil_scoped_acquire gil;
    try {
      bind(a);
      m_last = m_bound();
    } catch (py::error_already_set& e) {
      m_last = py::object();
      rethrow_as_kernel_error(e, "");
    }
  }

  void run_backward(const BackwardArgs& a) override {
    py::gil_scoped_acquire gil;
    try {
      if (m_backward.is_none()) throw KernelError("this Python kernel has no attnscope_backward");
      bind_backward(a);
      m_last_backward = m_bound_backward();
    } catch (py::error_already_set& e) {
      m_last_backward = py::object();
      rethrow_as_kernel_error(e, "backward: ");
    }
  }

  void copy_out_backward(const BackwardArgs& a) override {
    py::gil_scoped_acquire gil;
    try {
      bind_backward(a);
      kernels_module().attr("copy_out_backward")(m_bound_backward, m_last_backward);
    } catch (py::error_already_set& e) {
      rethrow_as_kernel_error(e, "backward: ");
    }
  }

  void copy_out(const AttentionArgs& a) override {
    py::gil_scoped_acquire gil;
    try {
      bind(a);
      kernels_module().attr("copy_out")(m_bound, m_last);
    } catch (py::error_already_set& e) {
      rethrow_as_kernel_error(e, "");
    }
  }

 private:
  // A tensor over an engine buffer: `lse` is fp32 whatever the problem's dtype; the CPU engine holds
  // every dtype as fp32 (rounded to the problem's dtype).
  py::object view(const void* data, std::vector<std::int64_t> shape, bool lse = false) const {
    void* memory = const_cast<void*>(data);
    if (!memory) return py::none();
    if (m_backend == Backend::cpu) return host_array(static_cast<float*>(memory), shape);
    return dlpack_view(memory, shape, lse ? DType::fp32 : m_problem.dtype, m_backend);
  }
  // BSHD tensors, or a varlen batch's packed rows as FlashAttention's varlen API takes them: Q and O
  // [total_q, Hq, D|Dv], K and V [total_kv, Hkv, D|Dv], LSE flat (sequence b's [Hq, q[b]] block at
  // Hq x its first row).
  std::vector<std::int64_t> rows_shape(std::int64_t batch, std::int64_t seq, std::int64_t total,
                                       std::int64_t heads, std::int64_t dim) const {
    if (m_problem.varlen.active()) return {total, heads, dim};
    return {batch, seq, heads, dim};
  }
  std::vector<std::int64_t> q_shape() const {
    const Problem& p = m_problem;
    return rows_shape(p.batch, p.seq_q, p.total_q(), p.heads_q, p.head_dim);
  }
  std::vector<std::int64_t> k_shape() const {
    const Problem& p = m_problem;
    return rows_shape(p.batch, p.seq_kv, p.total_kv(), p.heads_kv, p.head_dim);
  }
  std::vector<std::int64_t> v_shape() const {
    const Problem& p = m_problem;
    return rows_shape(p.batch, p.seq_kv, p.total_kv(), p.heads_kv, p.head_dim_v);
  }
  std::vector<std::int64_t> o_shape() const {
    const Problem& p = m_problem;
    return rows_shape(p.batch, p.seq_q, p.total_q(), p.heads_q, p.head_dim_v);
  }
  std::vector<std::int64_t> lse_shape() const {
    if (m_problem.varlen.active()) return {m_problem.lse_elems()};
    return {m_problem.batch, m_problem.heads_q, m_problem.seq_q};
  }

  // Tensors over the engine's buffers, made once per set of buffers (the timed runs reuse them).
  void bind(const AttentionArgs& a) {
    const std::vector<const void*> key{a.q, a.k, a.v, a.o, a.lse, a.stream};
    if (m_bound && key == m_key) return;
    m_bound = kernels_module().attr("bind")(
        m_fn, view(a.q, q_shape()), view(a.k, k_shape()), view(a.v, v_shape()), view(a.o, o_shape()),
        m_writes_lse ? view(a.lse, lse_shape(), true) : py::none(), problem_dict(m_problem, m_backend),
        reinterpret_cast<std::uintptr_t>(a.stream));
    m_key = key;
  }

  void bind_backward(const BackwardArgs& a) {
    const std::vector<const void*> key{a.q, a.k, a.v, a.o, a.lse, a.d_o, a.dq, a.dk, a.dv, a.stream};
    if (m_bound_backward && key == m_backward_key) return;
    m_bound_backward = kernels_module().attr("bind_backward")(
        m_backward, view(a.q, q_shape()), view(a.k, k_shape()), view(a.v, v_shape()), view(a.o, o_shape()),
        view(a.lse, lse_shape(), true), view(a.d_o, o_shape()), view(a.dq, q_shape()), view(a.dk, k_shape()),
        view(a.dv, v_shape()), problem_dict(m_problem, m_backend),
        reinterpret_cast<std::uintptr_t>(a.stream));
    m_backward_key = key;
  }

  py::object m_fn, m_backward, m_bound, m_bound_backward, m_last, m_last_backward;
  bool m_writes_lse = false;
  Problem m_problem;
  Backend m_backend;
  std::vector<const void*> m_key, m_backward_key;  // the buffers the bound calls hold
};

// A kernel definition (attnscope._kernels.KernelDef) as a registry entry. The definition lives as
// long as the process: registry entries are copied and outlive the interpreter's teardown, so they
// hold it without ever releasing it.
KernelSpec spec_of(const py::handle& def, Backend backend) {
  auto* held = new py::object(py::reinterpret_borrow<py::object>(def));
  // The definition's `method(problem) -> str` as a why_not: its refusal, or what it raised.
  auto refusal = [held](const char* method) {
    return [held, method](const Problem& p, const Knobs&) -> std::string {
      py::gil_scoped_acquire gil;
      try {
        return held->attr(method)(problem_dict(p, python_kernel_backend())).cast<std::string>();
      } catch (py::error_already_set& e) {
        return std::string(method) + " raised " + python_error_text(e);
      }
    };
  };
  KernelSpec s;
  s.id = def.attr("id").cast<std::string>();
  s.description = def.attr("description").cast<std::string>();
  s.backend = backend;
  s.why_not = refusal("why_not");
  s.prepare = [held](const Problem& p, const Knobs&) -> std::unique_ptr<PreparedKernel> {
    py::gil_scoped_acquire gil;
    const Backend b = python_kernel_backend();
    try {
      py::object fn = held->attr("prepare")(problem_dict(p, b));
      const bool writes_lse = held->attr("writes_lse_for")(problem_dict(p, b)).cast<bool>();
      return std::make_unique<PythonKernel>(std::move(fn), held->attr("backward"), writes_lse, p, b);
    } catch (py::error_already_set& e) {
      rethrow_as_kernel_error(e, "prepare: ");
    }
  };
  if (!def.attr("backward").is_none()) s.backward_why_not = refusal("backward_why_not");
  s.compressed_mask = def.attr("compressed_mask").cast<bool>();
  s.varlen = def.attr("varlen").cast<bool>();
  return s;
}

PythonKernels load(const PythonEntry& entry, Backend backend) {
  py::gil_scoped_acquire gil;
  try {
    py::object loaded = kernels_module().attr("load_entry")(entry.file, entry.function, entry.id,
                                                            std::string(to_string(backend)));
    PythonKernels out;
    out.name = loaded.attr("name").cast<std::string>();
    out.versions = loaded.attr("versions").cast<std::vector<std::string>>();
    for (const py::handle def : loaded.attr("kernels")) out.specs.push_back(spec_of(def, backend));
    return out;
  } catch (py::error_already_set& e) {
    throw PluginError(entry.text() + ": " + python_error_text(e));
  }
}

}  // namespace

std::string python_error_text(py::error_already_set& e) {
  std::string text = py::str(e.type().attr("__name__")).cast<std::string>();
  const std::string message = py::str(e.value()).cast<std::string>();
  if (!message.empty()) text += ": " + message;
  try {
    if (e.trace()) {
      const py::list frames = py::module_::import("traceback").attr("extract_tb")(e.trace());
      if (!frames.empty()) {
        const py::handle f = frames[frames.size() - 1];
        text += " (" + py::str(f.attr("filename")).cast<std::string>() + ":" +
                py::str(f.attr("lineno")).cast<std::string>() + " in " +
                py::str(f.attr("name")).cast<std::string>() + ")";
      }
    }
  } catch (py::error_already_set&) {
    // The location is a courtesy: the type and message stand alone.
  }
  return text;
}

void install_python_loader() { set_python_kernel_loader(load); }

py::dict describe_entry(const std::string& entry_text, const std::string& backend) {
  py::dict out;
  try {
    const std::optional<PythonEntry> entry = parse_python_entry(entry_text);
    if (!entry) throw PluginError(entry_text + ": expected python:FILE.py:FUNC=ID or python:<adapter id>");
    PythonKernels k;
    {
      py::gil_scoped_release release;  // load() takes the GIL back itself
      k = load(*entry, backend == "cuda" ? Backend::cuda : Backend::cpu);
    }
    out["name"] = k.name;
    out["versions"] = k.versions;
    py::list kernels;
    for (const KernelSpec& s : k.specs) {
      py::dict d;
      d["id"] = s.id;
      d["description"] = s.description;
      d["backward"] = static_cast<bool>(s.backward_why_not);
      d["compressed_mask"] = s.compressed_mask;
      d["varlen"] = s.varlen;
      kernels.append(d);
    }
    out["kernels"] = kernels;
  } catch (const PluginError& e) {
    out["error"] = std::string(e.what());
  }
  return out;
}

}  // namespace attn::python
