// The CPU backend: host buffers, wall-clock samples, cpu.reference as the oracle. L2 mode and
// graphs do not apply on the CPU and are ignored.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <thread>

#include "kernels/api/bucketing.hpp"
#include "kernels/cpu/cpu_reference.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/check.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/engine/host_memory.hpp"
#include "profiling/engine/inputs.hpp"
#include "profiling/engine/phase_clock.hpp"
#include "profiling/engine/sampler.hpp"

namespace attn {

void describe_host(RunInfo& run);

namespace {

class HostOom : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CpuEngine final : public CaseEngine {
 public:
  explicit CpuEngine(const Protocol& p) : m_protocol(p) {}

  void describe(RunInfo& run) const override {
    describe_host(run);
    run.backend = "cpu";
  }

  CaseResult run(const Case& c) override {
    const double t0 = monotonic_seconds();
    CaseResult r = case_record(c, Status::error);
    r.phases.emplace();
    bool writes_lse = false;
    try {
      run_checked(c, r, writes_lse);
    } catch (const Unsupported& e) {
      r.status = Status::skipped;
      r.reason = e.what();
    } catch (const HostOom& e) {
      r.status = Status::oom;
      r.reason = e.what();
    } catch (const std::bad_alloc&) {
      r.status = Status::oom;
      r.reason = fmt::format("host allocation failed (inputs {})",
                             format_bytes(cpu_case_footprint(c.problem, 0, false, false, 1).inputs));
    } catch (const std::length_error&) {  // a size past what std::vector can index
      r.status = Status::oom;
      r.reason = fmt::format("host allocation impossible (inputs {})",
                             format_bytes(cpu_case_footprint(c.problem, 0, false, false, 1).inputs));
    } catch (const std::exception& e) {
      r.status = Status::error;
      r.reason = e.what();
    }
    fill_derived(r, writes_lse);
    r.wall_s = monotonic_seconds() - t0;
    close_phases(*r.phases, r.wall_s);
    return r;
  }

 private:
  void run_checked(const Case& c, CaseResult& r, bool& writes_lse) {
    CasePhases& ph = *r.phases;
    std::optional<PhaseClock> prepare(std::in_place, ph.prepare_s);
    const KernelSpec* spec = find_kernel(c.kernel);
    if (!spec) throw KernelError("kernel '" + c.kernel + "' is not in this build's registry");
    if (!c.skip_reason.empty()) throw Unsupported(c.skip_reason);
    if (spec->backend != Backend::cpu) throw Unsupported("needs the cuda backend; this run uses cpu");
    if (auto why = kernel_why_not(*spec, c.problem, c.knobs); !why.empty()) throw Unsupported(why);
    const Problem& p = c.problem;
    const bool backward = has_backward(p.pass);
    if (backward)
      if (auto why = backward_why_not(*spec, p, c.knobs); !why.empty()) throw Unsupported(why);
    auto kernel = prepare_kernel(*spec, p, c.knobs);
    writes_lse = kernel->writes_lse();
    if (backward && !writes_lse)
      throw KernelError(c.kernel + " declares a backward pass but its forward writes no LSE");
    check_host_memory(c, kernel->workspace_bytes() + (backward ? kernel->backward_workspace_bytes() : 0));
    prepare.reset();
    ensure_reference(p, ph);
    prepare.emplace(ph.prepare_s);

    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto sized = [&](std::int64_t n, bool wanted) {
      return std::vector<float>(wanted ? std::size_t(n) : 0, nan);
    };
    std::vector<float> o = sized(p.o_elems(), true), lse = sized(p.lse_elems(), writes_lse);
    std::vector<float> dq = sized(p.q_elems(), backward), dk = sized(p.k_elems(), backward),
                       dv = sized(p.v_elems(), backward);
    std::vector<std::uint8_t> workspace(kernel->workspace_bytes());
    std::vector<std::uint8_t> backward_workspace(backward ? kernel->backward_workspace_bytes() : 0);
    AttentionArgs args;
    args.q = m_inputs.q.data();
    args.k = m_inputs.k.data();
    args.v = m_inputs.v.data();
    args.o = o.data();
    args.lse = writes_lse ? lse.data() : nullptr;
    args.scale = static_cast<float>(p.default_scale());
    args.workspace = workspace.data();
    args.workspace_bytes = workspace.size();
    kernel->copy_in(args);
    BackwardArgs bargs;
    if (backward) {
      bargs = {.q = args.q,
               .k = args.k,
               .v = args.v,
               .o = o.data(),
               .d_o = m_d_o.data(),
               .lse = lse.data(),
               .dq = dq.data(),
               .dk = dk.data(),
               .dv = dv.data(),
               .scale = args.scale,
               .workspace = backward_workspace.data(),
               .workspace_bytes = backward_workspace.size()};
    }
    r.device_bytes_peak =
        static_cast<std::int64_t>((m_inputs.q.size() + m_inputs.k.size() + m_inputs.v.size() + o.size() +
                                   lse.size() + m_d_o.size() + dq.size() + dk.size() + dv.size()) *
                                      sizeof(float) +
                                  workspace.size() + backward_workspace.size());
    prepare.reset();

    if (m_protocol.check || backward) {  // a backward needs the forward's O and LSE, checked or not
      PhaseClock clock(ph.check_s);
      kernel->run(args);
      kernel->copy_out(args);
    }
    if (m_protocol.check) {
      PhaseClock clock(ph.check_s);
      const std::string reference =
          c.kernel == "cpu.reference" ? "cpu.reference (self, fp64 -> fp32)" : "cpu.reference";
      CheckVerdict v = evaluate_output(p.dtype, o, m_ref_o, lse, m_ref_lse, nullptr, reference);
      r.correctness = v.correctness;
      if (!v.correctness.pass) {
        r.status = Status::mismatch;
        r.reason = backward ? "forward: " + v.reason : v.reason;
        return;  // never time a configuration that failed its check
      }
      if (backward) {
        kernel->run_backward(bargs);
        kernel->copy_out_backward(bargs);
        const GradErrors e{compare_outputs(dq, m_ref_dq), compare_outputs(dk, m_ref_dk),
                           compare_outputs(dv, m_ref_dv)};
        if (!record_gradients(r, evaluate_gradients(p.dtype, e, nullptr, reference))) return;
      }
    }

    SamplingSpan span;
    r.timing = measure_samples(
        m_protocol,
        [&] {
          const auto s = std::chrono::steady_clock::now();
          if (has_forward(p.pass)) kernel->run(args);
          if (backward) kernel->run_backward(bargs);
          return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
        },
        {}, &span);
    ph.warmup_s = span.warmup_s;
    ph.timed_s = span.sampling_s;
    r.status = Status::ok;
  }

  // Decided before allocating: a case larger than the free host memory would swap until its
  // time-out, or fail inside std::vector; it is `oom` with both sizes instead.
  void check_host_memory(const Case& c, std::size_t workspace_bytes) {
    const bool held = m_has_reference && m_ref_shape == shape_of(c.problem) &&
                      (!has_backward(c.problem.pass) || m_has_gradients);
    if (!m_has_reference || m_ref_shape != shape_of(c.problem)) release_reference();
    const HostFootprint need = cpu_case_footprint(
        c.problem, workspace_bytes, held, c.kernel == "cpu.reference", std::thread::hardware_concurrency());
    const auto mem = host_memory_available();
    if (!mem) return;  // unknown: let the allocation decide
    if (std::string why = host_memory_shortfall(need, *mem); !why.empty()) throw HostOom(why);
  }

  // The reference is kept per shape: the forward and backward cases of one shape share the inputs
  // and O, and the gradients are computed when the first backward case needs them.
  static Problem shape_of(Problem p) {
    p.pass = Pass::fwd;
    return p;
  }

  void release_reference() {
    m_has_reference = false;
    m_has_gradients = false;
    m_inputs = HostInputs{};
    m_ref_o = std::vector<float>{};
    m_ref_lse = std::vector<double>{};
    m_d_o = m_ref_dq = m_ref_dk = m_ref_dv = std::vector<float>{};
  }

  void ensure_reference(const Problem& p, CasePhases& ph) {
    if (!m_has_reference || m_ref_shape != shape_of(p)) {
      release_reference();
      {
        PhaseClock clock(ph.inputs_s);
        m_inputs = generate_inputs(p, m_protocol.seed);
      }
      PhaseClock clock(ph.reference_s);
      std::vector<double> o(static_cast<std::size_t>(p.o_elems()));
      m_ref_lse.assign(static_cast<std::size_t>(p.lse_elems()), 0.0);
      cpu_reference_attention(p, m_inputs.q.data(), m_inputs.k.data(), m_inputs.v.data(), p.default_scale(),
                              o.data(), m_ref_lse.data());
      m_ref_o.assign(o.begin(), o.end());
      m_ref_shape = shape_of(p);
      m_has_reference = true;
    }
    if (!has_backward(p.pass) || m_has_gradients) return;
    {
      PhaseClock clock(ph.inputs_s);
      m_d_o = generate_output_gradient(p, m_protocol.seed);
    }
    PhaseClock clock(ph.reference_s);
    std::vector<double> dq(static_cast<std::size_t>(p.q_elems())), dk(static_cast<std::size_t>(p.k_elems())),
        dv(static_cast<std::size_t>(p.v_elems()));
    cpu_reference_backward(p, m_inputs.q.data(), m_inputs.k.data(), m_inputs.v.data(), m_d_o.data(),
                           p.default_scale(), dq.data(), dk.data(), dv.data());
    m_ref_dq.assign(dq.begin(), dq.end());
    m_ref_dk.assign(dk.begin(), dk.end());
    m_ref_dv.assign(dv.begin(), dv.end());
    m_has_gradients = true;
  }

  Protocol m_protocol;
  bool m_has_reference = false;
  bool m_has_gradients = false;
  Problem m_ref_shape;  // the pass is always fwd: see shape_of()
  HostInputs m_inputs;
  std::vector<float> m_ref_o;
  std::vector<double> m_ref_lse;
  std::vector<float> m_d_o;                         // the incoming gradient (backward passes)
  std::vector<float> m_ref_dq, m_ref_dk, m_ref_dv;  // the reference gradients, fp64 rounded to fp32
};

}  // namespace

std::unique_ptr<CaseEngine> make_cpu_engine(const Protocol& protocol) {
  return std::make_unique<CpuEngine>(protocol);
}

}  // namespace attn
