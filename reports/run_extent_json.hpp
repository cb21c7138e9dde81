// JSON of the run record's end-of-run parts: `devices` (every device that took part) and `totals`
// (where the run's time went). Written when the run ends; absent from older records.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

nlohmann::json run_devices_json(const std::vector<RunDevice>& devices);
std::vector<RunDevice> run_devices_from(const nlohmann::json& j, const std::string& path);

nlohmann::json run_plugins_json(const std::vector<PluginRecord>& plugins);
std::vector<PluginRecord> run_plugins_from(const nlohmann::json& j, const std::string& path);

nlohmann::json run_totals_json(const RunTotals& t);
RunTotals run_totals_from(const nlohmann::json& j, const std::string& path);

// The peaks object {tensor_tflops_measured, ...}, shared with the run record's own `peaks`.
nlohmann::json peaks_to_json(const Peaks& p);
Peaks peaks_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace attn
