// Settings file: JSON read leniently (unknown keys ignored, bad values keep defaults) and written
// atomically.
#include "app/gui/persistence.hpp"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace attn::gui {

namespace fs = std::filesystem;

fs::path settings_path() {
  if (const char* p = std::getenv("ATTNSCOPE_GUI_SETTINGS"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return fs::path(x) / "attnscope" / "gui.json";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".config" / "attnscope" / "gui.json";
  return "attnscope-gui.json";
}

namespace {

template <class T>
void get(const nlohmann::json& j, const char* key, T& slot) {
  const auto it = j.find(key);
  if (it == j.end()) return;
  try {
    slot = it->get<T>();
  } catch (const nlohmann::json::exception&) {
    // Wrong type: keep the default.
  }
}

}  // namespace

GuiSettings load_settings(const fs::path& file, std::string& warning) {
  GuiSettings s;
  std::ifstream in(file);
  if (!in) return s;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    warning = file.string() + ": not valid JSON (" + e.what() + "); using default settings";
    return s;
  }
  if (!j.is_object()) return s;
  get(j, "width", s.width);
  get(j, "height", s.height);
  get(j, "export_width", s.export_width);
  get(j, "export_height", s.export_height);
  get(j, "recent", s.recent);
  if (const auto it = j.find("layout"); it != j.end() && it->is_object()) {
    get(*it, "left_w", s.layout.left_w);
    get(*it, "right_w", s.layout.right_w);
    get(*it, "plots_frac", s.layout.plots_frac);
    get(*it, "inspector_frac", s.layout.inspector_frac);
  }
  if (const auto it = j.find("plot"); it != j.end() && it->is_object()) {
    get(*it, "x", s.plot.x);
    get(*it, "tab", s.plot.tab);
    get(*it, "metric", s.plot.metric);
    get(*it, "baseline", s.plot.baseline);
    get(*it, "log_x", s.plot.log_x);
    get(*it, "show_legend", s.plot.show_legend);
    get(*it, "log_y", s.plot.log_y);
    get(*it, "group_by", s.plot.group_by);
    get(*it, "facet", s.plot.facet);
  }
  if (const auto it = j.find("sweep"); it != j.end()) s.form = form_from_json(*it);
  // Sanity: a corrupt size must not open an unusable window.
  if (s.width < 640 || s.width > 16384) s.width = 1600;
  if (s.height < 480 || s.height > 16384) s.height = 1000;
  if (s.recent.size() > kMaxRecent) s.recent.resize(kMaxRecent);
  return s;
}

void save_settings(const fs::path& file, const GuiSettings& s) {
  nlohmann::json j;
  j["width"] = s.width;
  j["height"] = s.height;
  j["export_width"] = s.export_width;
  j["export_height"] = s.export_height;
  j["recent"] = s.recent;
  j["layout"] = {{"left_w", s.layout.left_w},
                 {"right_w", s.layout.right_w},
                 {"plots_frac", s.layout.plots_frac},
                 {"inspector_frac", s.layout.inspector_frac}};
  j["plot"] = {{"x", s.plot.x},           {"tab", s.plot.tab},
               {"metric", s.plot.metric}, {"baseline", s.plot.baseline},
               {"log_x", s.plot.log_x},   {"show_legend", s.plot.show_legend},
               {"log_y", s.plot.log_y},   {"group_by", s.plot.group_by},
               {"facet", s.plot.facet}};
  j["sweep"] = form_to_json(s.form);
  std::error_code ec;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error(tmp.string() + ": cannot write the settings file");
    out << j.dump(2) << "\n";
    if (!out) throw std::runtime_error(tmp.string() + ": write failed");
  }
  fs::rename(tmp, file, ec);
  if (ec) throw std::runtime_error(file.string() + ": cannot replace the settings file: " + ec.message());
}

void add_recent(GuiSettings& s, const std::string& path) {
  std::string abs = path;
  std::error_code ec;
  const fs::path a = fs::absolute(path, ec);
  if (!ec) abs = a.lexically_normal().string();
  std::erase(s.recent, abs);
  s.recent.insert(s.recent.begin(), abs);
  if (s.recent.size() > kMaxRecent) s.recent.resize(kMaxRecent);
}

}  // namespace attn::gui
