// The measurement protocol's fields as the user names them: preset key ([protocol] table), CLI
// flag, value kind and valid range. One table serves presets, flags and the GUI.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "profiling/protocol.hpp"
#include "profiling/sweep/axis_parse.hpp"

namespace attn {

enum class FieldKind { number, integer, boolean, choice };

struct ProtocolField {
  const char* key;      // preset key in [protocol], e.g. "noise_pct"
  const char* flag;     // CLI flag, e.g. "--noise"
  FieldKind kind;       // what TOML type a preset must use
  const char* allowed;  // the valid range, quoted in errors and help
  const char* help;     // one line for --help
};

// Every Protocol field that a preset or flag can set, in Protocol's order. `check` is a preset
// key; its flag is --no-check (which sets check = false).
const std::vector<ProtocolField>& protocol_fields();
const ProtocolField* find_protocol_field(std::string_view key);

// Sets one field from its text form ("20", "0.5", "cold", "true"). Returns false and fills
// `problem` when the text does not parse or is out of range; `p` is then unchanged.
bool try_set_protocol_field(Protocol& p, std::string_view key, std::string_view text, AxisProblem& problem);

// Checks that cross fields agree (min_samples <= max_samples); empty when they do.
std::string protocol_consistency_problem(const Protocol& p);

}  // namespace attn
