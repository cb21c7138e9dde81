// The CUDA backend of the case engine: the DESIGN.md pipeline of one case, over its stages —
// the problem cache (inputs, reference, cuDNN error bar, the check), the case buffers, the timer
// (events, L2 flush, graphs), the profiling pass (launch statistics, CUPTI metrics) and the
// failure classification — plus NVML clocks during timing, peaks and the roofline.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "kernels/api/bucketing.hpp"
#include "kernels/registry.hpp"
#include "profiling/cuda/case_buffers.hpp"
#include "profiling/cuda/case_timer.hpp"
#include "profiling/cuda/cuda_device.hpp"
#include "profiling/cuda/cuda_status.hpp"
#include "profiling/cuda/failure.hpp"
#include "profiling/cuda/nvml_sampler.hpp"
#include "profiling/cuda/nvtx_range.hpp"
#include "profiling/cuda/problem_cache.hpp"
#include "profiling/cuda/profiling_pass.hpp"
#include "profiling/engine/devices.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/engine/pass_kernel.hpp"
#include "profiling/engine/phase_clock.hpp"
#include "profiling/engine/sampler.hpp"
#include "profiling/metrics.hpp"
#include "profiling/peaks.hpp"
#include "profiling/roofline.hpp"

namespace attn {

void describe_host(RunInfo& run);

namespace {

void announce(const std::string& line) { std::fprintf(stderr, "attnscope: %s\n", line.c_str()); }

// The stream and NVTX domain outlive every stage that uses them.
struct EngineContext {
  cudaStream_t stream = nullptr;
  nvtxDomainHandle_t nvtx = nullptr;
  EngineContext() {
    ATTN_CUDA_CHECK(cudaSetDevice(0));
    ATTN_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside the first timing
    ATTN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    nvtx = nvtxDomainCreateA(std::string(kNvtxDomain).c_str());
  }
  ~EngineContext() {
    if (stream) (void)cudaStreamDestroy(stream);
    if (nvtx) nvtxDomainDestroy(nvtx);
  }
  EngineContext(const EngineContext&) = delete;
  EngineContext& operator=(const EngineContext&) = delete;
};

class CudaEngine final : public CaseEngine {
 public:
  explicit CudaEngine(const Protocol& p)
      : m_protocol(p),
        m_device(query_device(0)),
        m_problems(p.seed, m_ctx.stream),
        m_timer(p, m_ctx.stream, m_device.l2_bytes),
        m_profiling(p, m_ctx.nvtx, announce) {}

  void describe(RunInfo& run) const override {
    describe_host(run);
    describe_cuda(run, m_device);
    if (const MeasuredPeaks* m = peaks()) apply_measured_peaks(run.peaks, *m);
    m_profiling.describe(run);
  }

  bool context_lost() const override { return !m_lost_reason.empty(); }
  std::string context_lost_reason() const override { return m_lost_reason; }

  void expect_next(const Problem& next) override { m_next = next; }

  CaseResult run(const Case& c) override {
    const std::optional<Problem> next = std::exchange(m_next, std::nullopt);  // this case's hint only
    const double t0 = monotonic_seconds();
    CaseResult r = case_record(c, Status::error);
    r.phases.emplace();
    bool writes_lse = false;
    if (context_lost()) {
      r.status = Status::fault;
      r.reason = "not run: the CUDA context was lost earlier (" + m_lost_reason + ")";
    } else {
      try {
        run_pipeline(c, next, r, writes_lse);
      } catch (const Unsupported& e) {
        r.status = Status::skipped;
        r.reason = e.what();
      } catch (const CudaError& e) {
        fail(r, e.what(), e.out_of_memory());
      } catch (const std::bad_alloc&) {
        r.status = Status::oom;
        r.reason = "host allocation failed";
      } catch (const std::exception& e) {
        fail(r, e.what(), false);
      }
      m_case = CaseBuffers{};
    }
    fill_derived(r, writes_lse);
    if (r.status == Status::ok) {
      Peaks pk = datasheet_peaks(m_device.name);
      if (const MeasuredPeaks* m = peaks()) apply_measured_peaks(pk, *m);
      r.roofline = roofline_for(r, pk);
    }
    r.wall_s = monotonic_seconds() - t0;
    close_phases(*r.phases, r.wall_s);
    return r;
  }

 private:
  // DESIGN.md, per case: allocate + seed inputs -> run once -> check vs reference -> time ->
  // CUPTI metrics pass -> launch stats. Throws for the case's own failures (run() records them).
  void run_pipeline(const Case& c, const std::optional<Problem>& next, CaseResult& r, bool& writes_lse) {
    CasePhases& ph = *r.phases;
    std::optional<PhaseClock> prepare(std::in_place, ph.prepare_s);
    const KernelSpec& spec = admit(c);
    const Problem& p = c.problem;
    const cudaStream_t stream = m_ctx.stream;
    prepare.reset();

    {
      PhaseClock clock(ph.inputs_s);
      m_problems.use(p);  // seeded inputs, shared by every kernel of this problem
      if (m_protocol.check) {
        m_problems.start_cudnn_build();
        if (next) m_problems.prefetch_cudnn_build(*next);
      }
      if (has_backward(p.pass)) m_problems.d_o();  // drawn now, so it counts as an input below
    }
    prepare.emplace(ph.prepare_s);
    std::size_t free_before = 0, free_after = 0, total = 0;
    ATTN_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    std::unique_ptr<PreparedKernel> kernel = prepare_kernel(spec, p, c.knobs);
    writes_lse = kernel->writes_lse();
    const bool backward = has_backward(p.pass);
    if (backward && !writes_lse)
      throw KernelError(c.kernel + " declares a backward pass but its forward writes no LSE");
    m_case = allocate_case_buffers(p, *kernel);  // `oom` here, before any reference is paid for
    const AttentionArgs args =
        make_args(p, m_problems.q().get(), m_problems.k().get(), m_problems.v().get(), m_case, stream);
    BackwardArgs backward_args;
    if (backward) backward_args = make_backward_args(args, m_problems.d_o().get(), m_case);
    // What the timer and the profiling pass launch: the case's pass.
    PassKernel pass_kernel(*kernel, p.pass, backward_args);
    kernel->copy_in(args);  // ordered on the stream before every run below
    prepare.reset();

    std::vector<float> lse;
    if (m_protocol.check || backward) {  // a backward needs the forward's O and LSE, checked or not
      PhaseClock clock(ph.check_s);
      NvtxRange range(m_ctx.nvtx, r.nvtx_range);
      run_once(*kernel, args, m_case);
      if (backward) run_backward_once(*kernel, backward_args, m_case);
    }
    ATTN_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    r.device_bytes_peak = static_cast<std::int64_t>(m_problems.input_bytes(p.pass)) +
                          static_cast<std::int64_t>(free_before > free_after ? free_before - free_after : 0);

    if (m_protocol.check) {
      {
        PhaseClock clock(ph.check_s);
        if (writes_lse)
          lse = download(m_case.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()), stream);
      }
      {
        PhaseClock clock(ph.reference_s);
        m_problems.ensure_reference();
      }
      PhaseClock clock(ph.check_s);
      const CheckVerdict v = m_problems.check(spec, m_case.o, lse);
      r.correctness = v.correctness;
      if (!v.correctness.pass) {
        r.status = Status::mismatch;
        r.reason = backward ? "forward: " + v.reason : v.reason;
        return;  // never time a configuration that failed its check
      }
      if (backward) {
        GradVerdict g;
        {
          PhaseClock reference(ph.reference_s);
          g = m_problems.check_gradients(spec, m_case);
        }
        if (!record_gradients(r, std::move(g))) return;
      }
    }

    time_case(pass_kernel, args, r);
    PhaseClock clock(ph.metrics_s);
    m_profiling.run(
        pass_kernel, args, r,
        [&] {
          // Poison first, then flush: the flush writes the poison's dirty lines back before the
          // measured launch, which would otherwise pay for them (seen as 2x DRAM writes on cases that
          // fit in L2).
          poison(m_case, stream);
          m_timer.cold_start();
          ATTN_CUDA_CHECK(cudaStreamSynchronize(stream));
        },
        static_cast<std::int64_t>(m_case.o.bytes() + m_case.lse.bytes() + m_case.workspace.bytes() +
                                  m_case.dq.bytes() + m_case.dk.bytes() + m_case.dv.bytes() +
                                  m_case.backward_workspace.bytes()));
  }

  // The registry entry of the case, or Unsupported with the reason it cannot run here.
  static const KernelSpec& admit(const Case& c) {
    const KernelSpec* spec = find_kernel(c.kernel);
    if (!spec) throw KernelError("kernel '" + c.kernel + "' is not in this build's registry");
    if (!c.skip_reason.empty()) throw Unsupported(c.skip_reason);
    if (spec->backend != Backend::cuda) throw Unsupported("needs the cpu backend; this run uses cuda");
    if (auto why = kernel_why_not(*spec, c.problem, c.knobs); !why.empty()) throw Unsupported(why);
    if (has_backward(c.problem.pass))
      if (auto why = backward_why_not(*spec, c.problem, c.knobs); !why.empty()) throw Unsupported(why);
    return *spec;
  }

  // Timing with NVML clocks sampled alongside; a clock drop is said in the reason.
  void time_case(PreparedKernel& kernel, const AttentionArgs& args, CaseResult& r) {
    if (m_protocol.cooldown_ms > 0) {
      PhaseClock clock(r.phases->cooldown_s);
      ATTN_CUDA_CHECK(cudaStreamSynchronize(m_ctx.stream));
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(m_protocol.cooldown_ms));
    }
    ClockSampler clocks(m_device.pci_bus_id);
    {
      NvtxRange range(m_ctx.nvtx, r.nvtx_range);
      clocks.start();
      SamplingSpan span;
      r.timing = m_timer.time(kernel, args, span);
      r.phases->warmup_s = span.warmup_s;
      r.phases->timed_s = span.sampling_s;
    }
    const ClockSampler::Summary cs = clocks.stop();
    if (cs.mean.sm_mhz || cs.mean.temp_c) {
      r.clocks = cs.mean;
      r.clocks->throttle_mask = cs.throttle_reasons;
      r.clocks->clocks_dropped = cs.clocks_dropped;
      r.clocks->sm_mhz_min = cs.sm_mhz_min;
    }
    r.status = Status::ok;
    if (cs.clocks_dropped)
      r.reason =
          fmt::format("SM clock dropped below 90% of its start during timing (throttle reasons 0x{:x})",
                      cs.throttle_reasons);
  }

  void fail(CaseResult& r, const std::string& what, bool oom) {
    FailureVerdict v = classify_failure(r.kernel + " " + r.problem.full_label(), what, oom);
    r.status = v.status;
    r.reason = std::move(v.reason);
    if (!v.context_lost.empty()) m_lost_reason = std::move(v.context_lost);
  }

  // Measured ceilings: from the per-GPU cache, measured (and announced) when missing. Under an
  // injected profiler only the cache is read, so the tool never sees the measurement's kernels.
  const MeasuredPeaks* peaks() const {
    if (!m_peaks_tried) {
      m_peaks_tried = true;
      Nvml* nvml = Nvml::instance();
      const std::string driver = nvml ? nvml->driver_version() : std::string();
      try {
        if (!m_profiling.tool().empty()) {
          if (auto cached = read_cached_peaks(peaks_cache_path(), peaks_cache_key(m_device, driver)))
            m_peaks = *cached;
        } else {
          m_peaks = load_or_measure_peaks(m_device, driver, false, announce);
        }
      } catch (const std::exception& e) {
        announce(std::string("measured peaks unavailable (datasheet values only): ") + e.what());
      }
    }
    return m_peaks ? &*m_peaks : nullptr;
  }

  // Declaration order is construction order: the context first, the case buffers last (freed first).
  Protocol m_protocol;
  EngineContext m_ctx;
  GpuInfo m_device;
  ProblemCache m_problems;
  std::optional<Problem> m_next;  // expect_next's hint, for the next run()
  CaseTimer m_timer;
  ProfilingPass m_profiling;
  CaseBuffers m_case;
  std::string m_lost_reason;  // non-empty once a sticky error lost the context
  mutable bool m_peaks_tried = false;
  mutable std::optional<MeasuredPeaks> m_peaks;
};

}  // namespace

std::unique_ptr<CaseEngine> make_cuda_engine(const Protocol& protocol) {
  std::string why;
  if (!probe_cuda_device(&why)) throw std::runtime_error("--backend cuda: " + why + "; use --backend cpu");
  return std::make_unique<CudaEngine>(protocol);
}

}  // namespace attn
