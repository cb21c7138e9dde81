// Measured ceilings of a GPU (dense fp16/bf16 tensor TFLOPS from a large cuBLAS GEMM, DRAM GB/s
// from a large device-to-device copy counting read + write), cached per GPU (name, PCI bus id,
// driver) in $XDG_CACHE_HOME/attnscope/peaks.json (else ~/.cache/attnscope/peaks.json).
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "profiling/result.hpp"

namespace attn {

struct MeasuredPeaks {
  double tensor_tflops_fp16 = 0;  // [TFLOP/s] median of timed 8192^3 GEMMs, fp32 accumulation
  double tensor_tflops_bf16 = 0;  // [TFLOP/s]
  double dram_gbps = 0;           // [GB/s] 2 x bytes / time of a 2 GiB device copy, median
  double l2_gbps = 0;             // [GB/s] reads of a buffer a quarter of the L2's size, median
  std::string measured_at;        // UTC ISO-8601
  std::string method;             // what was run, for the record
};

// "name|pci_bus_id|driver": a new driver or another board is measured again.
std::string peaks_cache_key(const GpuInfo& gpu, const std::string& driver);
// $XDG_CACHE_HOME/attnscope/peaks.json, else $HOME/.cache/attnscope/peaks.json.
std::filesystem::path peaks_cache_path();

// nullopt when the file or the key is missing or unreadable (a corrupt cache, or one written before
// a ceiling was measured, is re-measured).
std::optional<MeasuredPeaks> read_cached_peaks(const std::filesystem::path& file, const std::string& key);
// Adds or replaces `key`, keeping other GPUs' entries. Throws std::runtime_error on I/O failure.
void write_cached_peaks(const std::filesystem::path& file, const std::string& key, const MeasuredPeaks& p);

// Copies the measured values into a run record's peaks (tensor_tflops_measured = the larger).
void apply_measured_peaks(Peaks& peaks, const MeasuredPeaks& m);

// Runs the measurement on CUDA device 0 (about two seconds). Throws std::runtime_error when this
// build has no CUDA or the device fails.
MeasuredPeaks measure_peaks();

// The cached value for this GPU, or a fresh measurement (written to the cache) when missing or
// when `remeasure`; `announce` is called with a line before measuring. A cache that cannot be
// written is reported through `announce` and the measurement is still returned.
MeasuredPeaks load_or_measure_peaks(const GpuInfo& gpu, const std::string& driver, bool remeasure,
                                    void (*announce)(const std::string& line));

}  // namespace attn
