// `attnscope peaks`: the GPU's measured ceilings (cached per GPU) beside its datasheet values.
#pragma once
#include <CLI/CLI.hpp>

namespace attn::cli {

struct PeaksOptions {
  bool remeasure = false;
  bool json = false;
};

CLI::App* add_peaks_command(CLI::App& app, PeaksOptions& o);
int show_peaks(const PeaksOptions& o);

}  // namespace attn::cli
