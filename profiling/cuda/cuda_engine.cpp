// The CUDA backend of the case engine: device buffers, NaN poison, the check against
// cpu.reference (small cases) or cuda.reference plus sampled cpu.reference rows (large cases),
// event timing with optional L2 flush and CUDA-graph batching, NVML clocks, NVTX ranges, then
// launch statistics and the CUPTI metrics pass (separate from timing), peaks and the roofline.
#include <cuda_runtime_api.h>
#include <cupti_result.h>
#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>

#include "kernels/cpu/cpu_reference.hpp"
#include "kernels/registry.hpp"
#include "profiling/cuda/cuda_device.hpp"
#include "profiling/cuda/cuda_status.hpp"
#include "profiling/cuda/device_buffer.hpp"
#include "profiling/cuda/l2_flush.hpp"
#include "profiling/cuda/nvml_sampler.hpp"
#include "profiling/cuda/transfer.hpp"
#include "profiling/cupti/kernel_activity.hpp"
#include "profiling/cupti/range_profiler.hpp"
#include "profiling/engine/check.hpp"
#include "profiling/engine/devices.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/engine/inputs.hpp"
#include "profiling/engine/sampler.hpp"
#include "profiling/metrics.hpp"
#include "profiling/peaks.hpp"
#include "profiling/roofline.hpp"

namespace attn {

void describe_host(RunInfo& run);

namespace {

// Above this many reference FLOPs the CPU oracle would take seconds: use cuda.reference on the
// whole output and cpu.reference on kSampledRows rows instead.
constexpr double kCpuReferenceMaxFlops = 2e9;
constexpr int kSampledRows = 48;
// cuda.reference (fp32 accumulation over fp32 copies of the inputs) must match the fp64 oracle to
// fp32 accuracy on the sampled rows, or it is not fit to be a reference.
constexpr double kCudaReferenceMaxRelL2 = 1e-4;

class NvtxRange {
 public:
  NvtxRange(nvtxDomainHandle_t domain, const std::string& name) : m_domain(domain) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.c_str();
    nvtxDomainRangePushEx(m_domain, &a);
  }
  ~NvtxRange() { nvtxDomainRangePop(m_domain); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  nvtxDomainHandle_t m_domain;
};

std::string mib(double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); }

std::string self_exe() {
  char buf[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("attnscope");
}

void announce(const std::string& line) { std::fprintf(stderr, "attnscope: %s\n", line.c_str()); }

// Everything that depends only on the problem (and seed): shared by all kernels of that problem.
struct ProblemState {
  Problem problem;
  bool valid = false;
  HostInputs host;
  DeviceBuffer q, k, v;
  std::vector<float> ref_o;
  std::vector<double> ref_lse;
  std::string reference;
  std::vector<RowIndex> rows;    // sampled rows (large cases only)
  std::vector<double> rows_ref;  // cpu.reference on those rows, [rows, Dv]
  bool has_reference = false;
  std::optional<double> cudnn_rel_l2;
};

class CudaEngine final : public CaseEngine {
 public:
  explicit CudaEngine(const Protocol& p) : m_protocol(p) {
    ATTN_CUDA_CHECK(cudaSetDevice(0));
    ATTN_CUDA_CHECK(cudaFree(nullptr));  // create the context now, not inside the first timing
    m_device = query_device(0);
    ATTN_CUDA_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    ATTN_CUDA_CHECK(cudaEventCreate(&m_start));
    ATTN_CUDA_CHECK(cudaEventCreate(&m_stop));
    // Reading twice the L2's size evicts every line whatever the replacement policy and the H100's
    // two L2 partitions do; zero-filled once so the flush kernel's reads are well defined.
    m_flush = DeviceBuffer(2 * static_cast<std::size_t>(std::max<std::int64_t>(m_device.l2_bytes, 1 << 20)));
    ATTN_CUDA_CHECK(cudaMemsetAsync(m_flush.get(), 0, m_flush.bytes(), m_stream));
    ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    m_flush_sink = DeviceBuffer(sizeof(unsigned));
    m_nvtx = nvtxDomainCreateA(std::string(kNvtxDomain).c_str());
    setup_cupti();
  }
  ~CudaEngine() override {
    m_state = ProblemState{};
    m_flush.reset();
    if (m_start) (void)cudaEventDestroy(m_start);
    if (m_stop) (void)cudaEventDestroy(m_stop);
    if (m_stream) (void)cudaStreamDestroy(m_stream);
    if (m_nvtx) nvtxDomainDestroy(m_nvtx);
  }

  void describe(RunInfo& run) const override {
    describe_host(run);
    describe_cuda(run, m_device);
    if (const MeasuredPeaks* m = peaks()) apply_measured_peaks(run.peaks, *m);
    run.metrics_status = m_metrics_status;
    run.metrics_reason = m_metrics_reason;
    if (m_profiler) {
      run.metrics_names = m_profiler->names();
      run.metrics_passes = m_profiler->passes();
    }
  }

  bool context_lost() const override { return m_lost; }
  std::string context_lost_reason() const override { return m_lost_reason; }

  CaseResult run(const Case& c) override {
    const double t0 = monotonic_seconds();
    CaseResult r = case_record(c, Status::error);
    bool writes_lse = false;
    if (m_lost) {
      r.status = Status::fault;
      r.reason = "not run: the CUDA context was lost earlier (" + m_lost_reason + ")";
    } else {
      try {
        run_checked(c, r, writes_lse);
      } catch (const Unsupported& e) {
        r.status = Status::skipped;
        r.reason = e.what();
      } catch (const CudaError& e) {
        classify_failure(r, e.what(), e.out_of_memory());
      } catch (const std::bad_alloc&) {
        r.status = Status::oom;
        r.reason = "host allocation failed";
      } catch (const std::exception& e) {
        classify_failure(r, e.what(), false);
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
    return r;
  }

 private:
  struct CaseBuffers {
    DeviceBuffer o, lse, workspace;
  };

  void classify_failure(CaseResult& r, const std::string& what, bool oom) {
    // A sticky error poisons the context: every later CUDA call fails the same way.
    const cudaError_t sync = cudaDeviceSynchronize();
    const cudaError_t last = cudaGetLastError();
    const cudaError_t sticky = is_sticky(sync) ? sync : (is_sticky(last) ? last : cudaSuccess);
    if (sticky != cudaSuccess) {
      m_lost = true;
      m_lost_reason = fmt::format("{} in {} {}", cudaGetErrorName(sticky), r.kernel, r.problem.full_label());
      r.status = Status::fault;
      r.reason = fmt::format("{}: {}", cudaGetErrorName(sticky), what);
      return;
    }
    if (oom || what.find("ALLOC_FAILED") != std::string::npos ||
        what.find("out of memory") != std::string::npos) {
      std::size_t free_b = 0, total_b = 0;
      (void)cudaMemGetInfo(&free_b, &total_b);
      r.status = Status::oom;
      r.reason = fmt::format("{} (device has {} free of {})", what, mib(static_cast<double>(free_b)),
                             mib(static_cast<double>(total_b)));
      return;
    }
    r.status = Status::error;
    r.reason = what;
  }

  void run_checked(const Case& c, CaseResult& r, bool& writes_lse) {
    const KernelSpec* spec = find_kernel(c.kernel);
    if (!spec) throw KernelError("kernel '" + c.kernel + "' is not in this build's registry");
    if (!c.skip_reason.empty()) throw Unsupported(c.skip_reason);
    if (spec->backend != Backend::cuda) throw Unsupported("needs the cpu backend; this run uses cuda");
    if (auto why = spec->why_not(c.problem, c.knobs); !why.empty()) throw Unsupported(why);
    const Problem& p = c.problem;

    ensure_problem(p);
    std::size_t free_before = 0, total = 0;
    ATTN_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));

    std::unique_ptr<PreparedKernel> kernel = spec->prepare(p, c.knobs);
    writes_lse = kernel->writes_lse();
    const std::size_t elem = dtype_bytes(p.dtype);
    m_case.o = DeviceBuffer(static_cast<std::size_t>(p.o_elems()) * elem);
    if (writes_lse) m_case.lse = DeviceBuffer(static_cast<std::size_t>(p.lse_elems()) * sizeof(float));
    m_case.workspace = DeviceBuffer(kernel->workspace_bytes());
    AttentionArgs args = make_args(p, m_state.q, m_state.k, m_state.v, m_case);

    if (m_protocol.check) {
      NvtxRange range(m_nvtx, r.nvtx_range);
      poison(m_case);
      kernel->run(args);
      ATTN_CUDA_CHECK(cudaGetLastError());
      ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    }
    std::size_t free_after = 0;
    ATTN_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    r.device_bytes_peak =
        static_cast<std::int64_t>(m_state.q.bytes() + m_state.k.bytes() + m_state.v.bytes()) +
        static_cast<std::int64_t>(free_before > free_after ? free_before - free_after : 0);

    if (m_protocol.check) {
      const std::vector<float> out = download(m_case.o, p.dtype, static_cast<std::size_t>(p.o_elems()));
      ensure_reference(p);
      std::vector<float> lse;
      if (writes_lse) lse = download(m_case.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()));
      const double* cudnn =
          m_state.cudnn_rel_l2 && c.kernel != "cudnn.sdpa" ? &*m_state.cudnn_rel_l2 : nullptr;
      std::optional<StatedBound> stated;
      if (spec->stated_bound) stated = spec->stated_bound(p);
      CheckVerdict v = evaluate_output(p.dtype, out, m_state.ref_o, lse, m_state.ref_lse, cudnn,
                                       m_state.reference, stated ? &*stated : nullptr);
      if (!m_state.rows.empty()) add_sampled_rows(p, out, v);
      r.correctness = v.correctness;
      if (!v.correctness.pass) {
        r.status = Status::mismatch;
        r.reason = v.reason;
        return;  // never time a configuration that failed its check
      }
    }

    ClockSampler clocks(m_device.pci_bus_id);
    {
      NvtxRange range(m_nvtx, r.nvtx_range);
      clocks.start();
      r.timing = m_protocol.graphs ? time_with_graph(*kernel, args) : time_plain(*kernel, args);
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
    profile_case(*kernel, args, r);
  }

  // After timing, inside the case's NVTX range: one run under CUPTI activity for the launch
  // statistics, then the metrics launch in the "metrics" sub-range. Before that launch the state
  // is the same whether CUPTI or ncu measures it: L2 flushed in cold mode, output poisoned, idle.
  void profile_case(PreparedKernel& kernel, const AttentionArgs& args, CaseResult& r) {
    NvtxRange range(m_nvtx, r.nvtx_range);
    if (m_activity) {
      try {
        m_activity->begin();
        kernel.run(args);
        ATTN_CUDA_CHECK(cudaGetLastError());
        r.launch = m_activity->end();
      } catch (const CudaError&) {
        throw;
      } catch (const std::exception& e) {
        r.launch.clear();
        r.metrics_reason = std::string("launch statistics failed: ") + e.what();
      }
    }
    r.metrics_status = m_metrics_status;
    if (m_metrics_status != MetricsStatus::ok) {
      if (m_metrics_status == MetricsStatus::unavailable)
        r.metrics_reason = "unavailable in this run (see the run record's metrics_reason)";
      if (m_metrics_status == MetricsStatus::off) r.metrics_reason = "--metrics none";
      if (!m_tool.empty()) run_metrics_launch(kernel, args, nullptr, r);  // the launch ncu selects
      return;
    }
    r.ncu_command = ncu_command_for(self_exe(), variant_label(r), r.problem, m_protocol, m_profiler->names(),
                                    r.nvtx_range);
    run_metrics_launch(kernel, args, m_profiler.get(), r);
  }

  void run_metrics_launch(PreparedKernel& kernel, const AttentionArgs& args, cupti::RangeProfiler* profiler,
                          CaseResult& r) {
    // Poison first, then flush: the flush writes the poison's dirty lines back before the measured
    // launch, which would otherwise pay for them (seen as 2x DRAM writes on cases that fit in L2).
    poison(m_case);
    if (m_protocol.l2 == L2Mode::cold) flush_l2();
    ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    NvtxRange sub(m_nvtx, std::string(kNvtxMetricsRange));
    const double t0 = monotonic_seconds();
    if (!profiler) {
      kernel.run(args);
      ATTN_CUDA_CHECK(cudaGetLastError());
      ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
      return;
    }
    // Launch statistics say how many kernels one run launches; without them, room for many.
    const std::size_t expected = r.launch.size();
    std::vector<std::map<std::string, double>> rows;
    try {
      rows = profiler->collect(
          [&] {
            kernel.run(args);
            ATTN_CUDA_CHECK(cudaGetLastError());
          },
          expected > 0 ? expected : 256);
    } catch (const cupti::MetricsError& e) {
      r.metrics_status = MetricsStatus::failed;
      r.metrics_reason = e.what();
      return;
    }
    ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    if (expected > 0 && rows.size() != expected) {
      r.metrics_status = MetricsStatus::failed;
      r.metrics_reason = fmt::format(
          "the range profiler stored {} ranges for the {} kernels the case launches", rows.size(), expected);
      return;
    }
    CaseMetrics m;
    for (std::size_t i = 0; i < rows.size(); ++i)
      m.kernels.push_back(kernel_metrics_from(
          i < r.launch.size() ? r.launch[i].name : fmt::format("kernel {}", i), rows[i], m_request.extra));
    m.aggregate = aggregate_metrics(m.kernels);
    m.passes = profiler->passes();
    m.wall_s = monotonic_seconds() - t0;
    r.metrics = std::move(m);
    r.metrics_status = MetricsStatus::ok;
  }

  // CUPTI set-up, once per engine: what is available is decided (and said) here, not per case.
  void setup_cupti() {
    std::string problem;
    if (!parse_metrics_request(m_protocol.metrics, m_request, problem))
      throw std::runtime_error("--metrics '" + m_protocol.metrics + "': " + problem +
                               "; allowed: " + kMetricsRequestAllowed);
    m_tool = injected_profiler();
    if (!m_tool.empty()) {
      m_metrics_status = MetricsStatus::unavailable;
      m_metrics_reason = "running under " + m_tool +
                         ", which owns the GPU's counters: take the metrics from its report (each case's "
                         "ncu_command selects that case's metrics launch by NVTX range)";
      announce("CUPTI metrics and launch statistics off: " + m_metrics_reason + "; timing goes on");
      return;
    }
    cudaDeviceProp prop{};
    ATTN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    SmLimits limits;
    limits.max_warps = prop.maxThreadsPerMultiProcessor / 32;
    limits.max_blocks = prop.maxBlocksPerMultiProcessor;
    limits.regs_per_sm = prop.regsPerMultiprocessor;
    limits.smem_per_sm = static_cast<std::int64_t>(prop.sharedMemPerMultiprocessor);
    limits.reserved_smem_per_block = static_cast<std::int64_t>(prop.reservedSharedMemPerBlock);
    std::string why;
    m_activity = cupti::KernelActivity::create(limits, why);
    if (!m_activity) announce("launch statistics unavailable: " + why);
    if (!m_request.enabled) {
      m_metrics_status = MetricsStatus::off;
      m_metrics_reason = "--metrics none";
      return;
    }
    int code = 0;
    try {
      m_profiler = cupti::RangeProfiler::create(m_request.names, why, &code);
    } catch (const cupti::MetricsError& e) {
      throw std::runtime_error(std::string("--metrics: ") + e.what());
    }
    if (!m_profiler &&
        (code == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || code == CUPTI_ERROR_HARDWARE_BUSY)) {
      // A tool this process did not recognise holds the counters: behave as under ncu, so its
      // NVTX filter still finds each case's metrics launch.
      m_tool = "another profiler";
      m_activity.reset();
    }
    if (!m_profiler) {
      m_metrics_status = MetricsStatus::unavailable;
      m_metrics_reason = why;
      announce("CUPTI metrics unavailable: " + why + "; timing goes on");
      return;
    }
    m_metrics_status = MetricsStatus::ok;
  }

  // Measured ceilings: from the per-GPU cache, measured (and announced) when missing. Under an
  // injected profiler only the cache is read, so the tool never sees the measurement's kernels.
  const MeasuredPeaks* peaks() const {
    if (!m_peaks_tried) {
      m_peaks_tried = true;
      Nvml* nvml = Nvml::instance();
      const std::string driver = nvml ? nvml->driver_version() : std::string();
      try {
        if (!m_tool.empty()) {
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

  AttentionArgs make_args(const Problem& p, const DeviceBuffer& q, const DeviceBuffer& k,
                          const DeviceBuffer& v, const CaseBuffers& b) const {
    AttentionArgs a;
    a.q = q.get();
    a.k = k.get();
    a.v = v.get();
    a.o = b.o.get();
    a.lse = b.lse.as<float>();
    a.scale = static_cast<float>(p.default_scale());
    a.workspace = b.workspace.get();
    a.workspace_bytes = b.workspace.bytes();
    a.stream = m_stream;
    return a;
  }

  void poison(const CaseBuffers& b) {
    // 0xFF bytes are NaN in fp16, bf16 and fp32 alike.
    ATTN_CUDA_CHECK(cudaMemsetAsync(b.o.get(), 0xFF, b.o.bytes(), m_stream));
    if (b.lse.get()) ATTN_CUDA_CHECK(cudaMemsetAsync(b.lse.get(), 0xFF, b.lse.bytes(), m_stream));
  }

  std::vector<float> download(const DeviceBuffer& b, DType t, std::size_t count) {
    std::vector<std::uint8_t> bytes(count * dtype_bytes(t));
    copy_to_host(bytes.data(), b.get(), bytes.size(), m_stream);
    return unpack_from(t, bytes.data(), count);
  }

  DeviceBuffer upload(const std::vector<float>& values, DType t) {
    const std::vector<std::uint8_t> bytes = pack_as(t, values);
    DeviceBuffer d(bytes.size());
    copy_to_device(d.get(), bytes.data(), bytes.size(), m_stream);
    return d;
  }

  // Inputs of one problem, shared by all its kernels.
  void ensure_problem(const Problem& p) {
    if (m_state.valid && m_state.problem == p) return;
    m_state = ProblemState{};
    m_state.problem = p;
    m_state.host = generate_inputs(p, m_protocol.seed);
    m_state.q = upload(m_state.host.q, p.dtype);
    m_state.k = upload(m_state.host.k, p.dtype);
    m_state.v = upload(m_state.host.v, p.dtype);
    m_state.valid = true;
  }

  // The reference output and cuDNN's error bar, computed on first use after the kernel under test
  // has its buffers: a case that does not fit reports `oom` without paying for a reference first.
  void ensure_reference(const Problem& p) {
    if (m_state.has_reference) return;
    compute_reference(p);
    measure_cudnn_error(p);
    m_state.has_reference = true;
  }

  void compute_reference(const Problem& p) {
    const auto& in = m_state.host;
    const double scale = p.default_scale();
    if (p.flops() <= kCpuReferenceMaxFlops) {
      std::vector<double> o(static_cast<std::size_t>(p.o_elems()));
      m_state.ref_lse.assign(static_cast<std::size_t>(p.lse_elems()), 0.0);
      cpu_reference_attention(p, in.q.data(), in.k.data(), in.v.data(), scale, o.data(),
                              m_state.ref_lse.data());
      m_state.ref_o.assign(o.begin(), o.end());
      m_state.reference = "cpu.reference";
      return;
    }
    // cuda.reference on fp32 copies of the (already rounded) inputs, so its output is not rounded to fp16.
    const KernelSpec* ref = find_kernel("cuda.reference");
    if (!ref) throw KernelError("cuda.reference is missing from the registry");
    Problem p32 = p;
    p32.dtype = DType::fp32;
    if (auto why = ref->why_not(p32, {}); !why.empty())
      throw KernelError("cuda.reference refuses the case: " + why);
    auto kernel = ref->prepare(p32, {});
    CaseBuffers b;
    b.o = DeviceBuffer(static_cast<std::size_t>(p.o_elems()) * sizeof(float));
    b.lse = DeviceBuffer(static_cast<std::size_t>(p.lse_elems()) * sizeof(float));
    b.workspace = DeviceBuffer(kernel->workspace_bytes());
    {
      DeviceBuffer q = upload(in.q, DType::fp32), k = upload(in.k, DType::fp32),
                   v = upload(in.v, DType::fp32);
      poison(b);
      kernel->run(make_args(p32, q, k, v, b));
      ATTN_CUDA_CHECK(cudaGetLastError());
      ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    }
    m_state.ref_o = download(b.o, DType::fp32, static_cast<std::size_t>(p.o_elems()));
    const std::vector<float> lse = download(b.lse, DType::fp32, static_cast<std::size_t>(p.lse_elems()));
    m_state.ref_lse.assign(lse.begin(), lse.end());

    // Sampled rows: cpu.reference checks cuda.reference, and later each kernel too.
    std::mt19937_64 rng(m_protocol.seed ^ 0x5A5A5A5Aull);
    for (int n = 0; n < kSampledRows; ++n) {
      RowIndex row{static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.batch)),
                   static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.heads_q)),
                   static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.seq_q))};
      if (n == 0) row.i = p.seq_q - 1;  // always one last row: the causal edge and the tail tile
      m_state.rows.push_back(row);
    }
    m_state.rows_ref.assign(m_state.rows.size() * static_cast<std::size_t>(p.head_dim_v), 0.0);
    cpu_reference_rows(p, in.q.data(), in.k.data(), in.v.data(), scale, m_state.rows, m_state.rows_ref.data(),
                       nullptr);
    const double ref_err = rows_rel_l2(p, m_state.ref_o);
    if (!(ref_err <= kCudaReferenceMaxRelL2))
      throw KernelError(
          fmt::format("cuda.reference disagrees with cpu.reference on {} sampled rows: rel_l2 {:.3e}",
                      m_state.rows.size(), ref_err));
    m_state.reference = fmt::format("cuda.reference (fp32) + cpu.reference on {} rows (agree to {:.1e})",
                                    m_state.rows.size(), ref_err);
  }

  double rows_rel_l2(const Problem& p, const std::vector<float>& out) const {
    const std::int64_t dv = p.head_dim_v;
    std::vector<float> picked;
    picked.reserve(m_state.rows_ref.size());
    for (const RowIndex& row : m_state.rows) {
      const std::size_t base = static_cast<std::size_t>(((row.b * p.seq_q + row.i) * p.heads_q + row.h) * dv);
      picked.insert(picked.end(), out.begin() + static_cast<std::ptrdiff_t>(base),
                    out.begin() + static_cast<std::ptrdiff_t>(base) + dv);
    }
    return compare_outputs(picked, m_state.rows_ref).rel_l2;
  }

  void add_sampled_rows(const Problem& p, const std::vector<float>& out, CheckVerdict& v) const {
    const double err = rows_rel_l2(p, out);
    v.correctness.sampled_rows = static_cast<std::int64_t>(m_state.rows.size());
    v.correctness.sampled_rows_rel_l2 = err;
    if (v.correctness.pass && !(err <= v.correctness.tol)) {
      v.correctness.pass = false;
      v.reason = fmt::format("sampled rows against cpu.reference: rel_l2 {:.3e} > tol {:.3e}", err,
                             v.correctness.tol);
    }
  }

  // The tolerance rule needs cuDNN's own error on these inputs (fp16/bf16 where cuDNN takes the case).
  void measure_cudnn_error(const Problem& p) {
    const KernelSpec* dnn = find_kernel("cudnn.sdpa");
    if (!dnn || p.dtype == DType::fp32 || !dnn->why_not(p, {}).empty()) return;
    try {
      auto kernel = dnn->prepare(p, {});
      CaseBuffers b;
      b.o = DeviceBuffer(static_cast<std::size_t>(p.o_elems()) * dtype_bytes(p.dtype));
      if (kernel->writes_lse()) b.lse = DeviceBuffer(static_cast<std::size_t>(p.lse_elems()) * sizeof(float));
      b.workspace = DeviceBuffer(kernel->workspace_bytes());
      poison(b);
      kernel->run(make_args(p, m_state.q, m_state.k, m_state.v, b));
      ATTN_CUDA_CHECK(cudaGetLastError());
      ATTN_CUDA_CHECK(cudaStreamSynchronize(m_stream));
      const std::vector<float> out = download(b.o, p.dtype, static_cast<std::size_t>(p.o_elems()));
      const ErrorStats e = compare_outputs(out, m_state.ref_o);
      if (e.nonfinite == 0) m_state.cudnn_rel_l2 = e.rel_l2;
    } catch (const Unsupported&) {
      // cuDNN refuses the case: the dtype bound applies.
    } catch (const CudaError& e) {
      if (is_sticky(e.code())) throw;
    } catch (const KernelError&) {
      // A cuDNN failure here must not fail other kernels' checks: they fall back to the dtype bound.
    }
  }

  void flush_l2() {
    launch_l2_flush(m_flush.get(), m_flush.bytes(), m_flush_sink.as<unsigned>(), m_stream);
    ATTN_CUDA_CHECK(cudaGetLastError());
  }

  double time_one(PreparedKernel& kernel, const AttentionArgs& args) {
    if (m_protocol.l2 == L2Mode::cold) flush_l2();
    ATTN_CUDA_CHECK(cudaEventRecord(m_start, m_stream));
    kernel.run(args);
    ATTN_CUDA_CHECK(cudaEventRecord(m_stop, m_stream));
    ATTN_CUDA_CHECK(cudaEventSynchronize(m_stop));
    float ms = 0;
    ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
    return ms;
  }

  TimingStats time_plain(PreparedKernel& kernel, const AttentionArgs& args) {
    return measure_samples(m_protocol, [&] { return time_one(kernel, args); });
  }

  // Tiny cases: one sample = one graph of n launches, so launch gaps do not dominate. Cold L2 then
  // flushes before each graph, not between its launches.
  TimingStats time_with_graph(PreparedKernel& kernel, const AttentionArgs& args) {
    int n = m_protocol.graph_batch;
    if (n <= 0) {
      const double one_ms = std::max(1e-3, time_one(kernel, args));
      n = std::clamp(static_cast<int>(std::lround(1.0 / one_ms)), 1, 200);  // ~1 ms per sample
    }
    cudaGraph_t graph = nullptr;
    ATTN_CUDA_CHECK(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal));
    try {
      for (int i = 0; i < n; ++i) kernel.run(args);
    } catch (...) {
      (void)cudaStreamEndCapture(m_stream, &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    ATTN_CUDA_CHECK(cudaStreamEndCapture(m_stream, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    (void)cudaGraphDestroy(graph);
    ATTN_CUDA_CHECK(inst);
    struct ExecGuard {
      cudaGraphExec_t e;
      ~ExecGuard() { (void)cudaGraphExecDestroy(e); }
    } guard{exec};
    TimingStats t = measure_samples(m_protocol, [&] {
      if (m_protocol.l2 == L2Mode::cold) flush_l2();
      ATTN_CUDA_CHECK(cudaEventRecord(m_start, m_stream));
      ATTN_CUDA_CHECK(cudaGraphLaunch(exec, m_stream));
      ATTN_CUDA_CHECK(cudaEventRecord(m_stop, m_stream));
      ATTN_CUDA_CHECK(cudaEventSynchronize(m_stop));
      float ms = 0;
      ATTN_CUDA_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop));
      return static_cast<double>(ms) / n;
    });
    t.launches_per_sample = n;
    return t;
  }

  Protocol m_protocol;
  GpuInfo m_device;
  cudaStream_t m_stream = nullptr;
  cudaEvent_t m_start = nullptr, m_stop = nullptr;
  DeviceBuffer m_flush, m_flush_sink;
  nvtxDomainHandle_t m_nvtx = nullptr;
  ProblemState m_state;
  CaseBuffers m_case;
  bool m_lost = false;
  std::string m_lost_reason;
  MetricsRequest m_request;
  std::string m_tool;  // the injected profiler (ncu, nsys), when there is one
  MetricsStatus m_metrics_status = MetricsStatus::not_attempted;
  std::string m_metrics_reason;
  std::unique_ptr<cupti::KernelActivity> m_activity;
  std::unique_ptr<cupti::RangeProfiler> m_profiler;
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
