// run_gui(): GLFW window and OpenGL 3 context, ImGui with the DejaVu fonts and a light theme in
// the plot palette, the fixed tiled layout (Sweep | Plots over Results | Inspector over Roofline)
// with draggable splitters, the menu bar, shortcuts, and the frame loop with its test hooks.
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <fmt/format.h>
#include <imgui.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/gui/gui_app.hpp"
#include "app/gui/panels.hpp"
#include "reports/plot/raster.hpp"

namespace attn::gui {

namespace {

namespace fs = std::filesystem;

// GL 1.1 entry points we call ourselves, fetched through GLFW so attnscope-gui does not link
// libGL directly (GLFW and the ImGui backend load it).
struct Gl {
  void (*Viewport)(int, int, int, int) = nullptr;
  void (*ClearColor)(float, float, float, float) = nullptr;
  void (*Clear)(unsigned) = nullptr;
  void (*Finish)() = nullptr;
  void (*PixelStorei)(unsigned, int) = nullptr;
  void (*ReadPixels)(int, int, int, int, unsigned, unsigned, void*) = nullptr;
};
constexpr unsigned kGlColorBufferBit = 0x4000, kGlRgba = 0x1908, kGlUnsignedByte = 0x1401,
                   kGlPackAlignment = 0x0D05;

template <class F>
void load(F& f, const char* name) {
  f = reinterpret_cast<F>(glfwGetProcAddress(name));
}

// CPU time of the whole process (every thread: ours and the software rasteriser's) [ms].
double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
          static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3);
}

void glfw_error(int code, const char* what) {
  std::fprintf(stderr, "attnscope gui: GLFW error %d: %s\n", code, what);
}

bool parse_size(const std::string& s, int& w, int& h) {
  const auto x = s.find_first_of("xX");
  if (x == std::string::npos) return false;
  try {
    std::size_t a = 0, b = 0;
    w = std::stoi(s.substr(0, x), &a);
    h = std::stoi(s.substr(x + 1), &b);
    return a == x && b == s.size() - x - 1 && w >= 320 && h >= 240 && w <= 16384 && h <= 16384;
  } catch (const std::exception&) {
    return false;
  }
}

// A light theme whose accents are the plot palette's blue, so the widgets and plots read as one.
void apply_theme(float scale) {
  ImGuiStyle& st = ImGui::GetStyle();
  ImGui::StyleColorsLight(&st);
  st.WindowPadding = ImVec2(8, 8);
  st.FramePadding = ImVec2(6, 4);
  st.ItemSpacing = ImVec2(8, 5);
  st.ItemInnerSpacing = ImVec2(6, 4);
  st.ScrollbarSize = 12;
  st.FrameRounding = 3;
  st.ChildRounding = 4;
  st.PopupRounding = 4;
  st.GrabRounding = 3;
  st.TabRounding = 3;
  st.WindowRounding = 4;
  st.ChildBorderSize = 1;
  st.FrameBorderSize = 0;
  ImVec4* c = st.Colors;
  const ImVec4 blue(0.122f, 0.467f, 0.706f, 1.0f);  // palette_color(0)
  c[ImGuiCol_Text] = ImVec4(0.10f, 0.10f, 0.11f, 1);
  c[ImGuiCol_TextDisabled] = ImVec4(0.47f, 0.48f, 0.50f, 1);
  c[ImGuiCol_WindowBg] = ImVec4(0.955f, 0.96f, 0.968f, 1);
  c[ImGuiCol_ChildBg] = ImVec4(1, 1, 1, 1);
  c[ImGuiCol_PopupBg] = ImVec4(1, 1, 1, 0.98f);
  c[ImGuiCol_Border] = ImVec4(0.84f, 0.85f, 0.87f, 1);
  c[ImGuiCol_FrameBg] = ImVec4(0.93f, 0.94f, 0.95f, 1);
  c[ImGuiCol_FrameBgHovered] = ImVec4(0.87f, 0.91f, 0.95f, 1);
  c[ImGuiCol_FrameBgActive] = ImVec4(0.82f, 0.88f, 0.94f, 1);
  c[ImGuiCol_MenuBarBg] = ImVec4(0.93f, 0.935f, 0.945f, 1);
  c[ImGuiCol_CheckMark] = blue;
  c[ImGuiCol_SliderGrab] = blue;
  c[ImGuiCol_Button] = ImVec4(0.90f, 0.91f, 0.93f, 1);
  c[ImGuiCol_ButtonHovered] = ImVec4(0.80f, 0.87f, 0.94f, 1);
  c[ImGuiCol_ButtonActive] = ImVec4(0.70f, 0.81f, 0.92f, 1);
  c[ImGuiCol_Header] = ImVec4(blue.x, blue.y, blue.z, 0.22f);
  c[ImGuiCol_HeaderHovered] = ImVec4(blue.x, blue.y, blue.z, 0.14f);
  c[ImGuiCol_HeaderActive] = ImVec4(blue.x, blue.y, blue.z, 0.30f);
  c[ImGuiCol_Tab] = ImVec4(0.90f, 0.91f, 0.93f, 1);
  c[ImGuiCol_TabHovered] = ImVec4(0.80f, 0.87f, 0.94f, 1);
  c[ImGuiCol_TabActive] = ImVec4(1, 1, 1, 1);
  c[ImGuiCol_TableHeaderBg] = ImVec4(0.94f, 0.945f, 0.955f, 1);
  c[ImGuiCol_TableRowBgAlt] = ImVec4(0.975f, 0.978f, 0.983f, 1);
  c[ImGuiCol_Separator] = ImVec4(0.86f, 0.87f, 0.89f, 1);
  c[ImGuiCol_PlotHistogram] = blue;
  c[ImGuiCol_TextSelectedBg] = ImVec4(blue.x, blue.y, blue.z, 0.30f);
  c[ImGuiCol_NavHighlight] = blue;
  st.ScaleAllSizes(scale);
}

// A draggable gap between two panels; returns the drag [px] along its axis.
float splitter(const char* id, bool vertical, ImVec2 size) {
  ImGui::InvisibleButton(id, size);
  const bool hot = ImGui::IsItemHovered() || ImGui::IsItemActive();
  if (hot) ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
  if (hot) {
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddRectFilled(a, b, IM_COL32(31, 119, 180, 70));
  }
  if (!ImGui::IsItemActive()) return 0;
  return vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y;
}

bool begin_panel(const char* id, ImVec2 size) {
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(10, 8));
  // Panels are the white of the cleared framebuffer: no fill of their own (a software rasteriser
  // pays for every blended pixel), only their border.
  const bool open = ImGui::BeginChild(id, size, true, ImGuiWindowFlags_NoBackground);
  ImGui::PopStyleVar();
  return open;
}

void draw_layout(GuiState& s) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0);
  // No background: glClear paints the same colour for free, where a window fill would cost a
  // full-screen blended pass on a software rasteriser.
  ImGui::Begin("attnscope##main", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus |
                   ImGuiWindowFlags_NoBackground);
  ImGui::PopStyleVar(2);
  draw_menu_bar(s);

  const float sc = s.fonts.scale();
  const float gap = 6 * sc;
  LayoutSettings& L = s.settings.layout;
  const bool running = s.progress().running;
  const float run_h = ImGui::GetFrameHeight() + ImGui::GetStyle().WindowPadding.y * 2 + 2 +
                      (running ? ImGui::GetTextLineHeightWithSpacing() : 0);
  if (begin_panel("run_bar", ImVec2(0, run_h))) draw_run_bar(s);
  ImGui::EndChild();

  const float status_h = ImGui::GetFrameHeight() + 4;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float body_h = std::max(200.0f, avail.y - status_h - ImGui::GetStyle().ItemSpacing.y);
  L.left_w = std::clamp(L.left_w, 240.0f, std::max(240.0f, avail.x * 0.45f) / sc);
  L.right_w = std::clamp(L.right_w, 260.0f, std::max(260.0f, avail.x * 0.45f) / sc);
  const float left_w = L.left_w * sc, right_w = L.right_w * sc;
  const float center_w = std::max(200.0f, avail.x - left_w - right_w - 2 * gap);

  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
  if (begin_panel("sweep", ImVec2(left_w, body_h))) {
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(8 * sc, 5 * sc));
    draw_sweep_panel(s);
    ImGui::PopStyleVar();
  }
  ImGui::EndChild();
  ImGui::SameLine();
  L.left_w += splitter("split_left", true, ImVec2(gap, body_h)) / sc;
  ImGui::SameLine();

  // Centre: Plots over Results.
  ImGui::BeginGroup();
  L.plots_frac = std::clamp(L.plots_frac, 0.2f, 0.85f);
  const float plots_h = std::floor((body_h - gap) * L.plots_frac);
  auto inner = [&](const char* id, ImVec2 size, void (*draw)(GuiState&)) {
    if (begin_panel(id, size)) {
      ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(8 * sc, 5 * sc));
      draw(s);
      ImGui::PopStyleVar();
    }
    ImGui::EndChild();
  };
  inner("plots", ImVec2(center_w, plots_h), draw_plots_panel);
  L.plots_frac += splitter("split_center", false, ImVec2(center_w, gap)) / (body_h - gap);
  inner("results", ImVec2(center_w, body_h - plots_h - gap), draw_results_panel);
  ImGui::EndGroup();
  ImGui::SameLine();
  L.right_w -= splitter("split_right", true, ImVec2(gap, body_h)) / sc;
  ImGui::SameLine();

  // Right: Inspector over Roofline.
  ImGui::BeginGroup();
  L.inspector_frac = std::clamp(L.inspector_frac, 0.2f, 0.85f);
  const float insp_h = std::floor((body_h - gap) * L.inspector_frac);
  inner("inspector", ImVec2(right_w, insp_h), draw_inspector_panel);
  L.inspector_frac += splitter("split_rightcol", false, ImVec2(right_w, gap)) / (body_h - gap);
  // The slot of panel_list.def's panels: the one panel as it is, several as tabs.
  struct Listed {
    const char* id;
    const char* title;
    void (*draw)(GuiState&);
  };
  static constexpr Listed kListed[] = {
#define ATTN_PANEL(id, title) {#id, title, &draw_##id##_panel},
#include "app/gui/panel_list.def"
#undef ATTN_PANEL
  };
  if (std::size(kListed) == 1) {
    inner(kListed[0].id, ImVec2(right_w, body_h - insp_h - gap), kListed[0].draw);
  } else {
    ImGui::BeginGroup();
    if (ImGui::BeginTabBar("listed_panels")) {
      for (const Listed& p : kListed)
        if (ImGui::BeginTabItem(p.title)) {
          inner(p.id, ImVec2(right_w, body_h - insp_h - gap - ImGui::GetFrameHeightWithSpacing()), p.draw);
          ImGui::EndTabItem();
        }
      ImGui::EndTabBar();
    }
    ImGui::EndGroup();
  }
  ImGui::EndGroup();
  ImGui::PopStyleVar();

  ImGui::Spacing();
  draw_status_bar(s);
  draw_dialogs(s);
  ImGui::End();
}

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// The framebuffer's back buffer, top row first, as a PNG.
void write_screenshot(const Gl& gl, int w, int h, const fs::path& file) {
  plot::Image img;
  img.width = w;
  img.height = h;
  std::vector<std::uint8_t> rows(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  gl.PixelStorei(kGlPackAlignment, 1);
  gl.ReadPixels(0, 0, w, h, kGlRgba, kGlUnsignedByte, rows.data());
  img.rgba.resize(rows.size());
  const std::size_t stride = static_cast<std::size_t>(w) * 4;
  for (int y = 0; y < h; ++y)
    std::copy_n(rows.data() + static_cast<std::size_t>(h - 1 - y) * stride, stride,
                img.rgba.data() + static_cast<std::size_t>(y) * stride);
  for (std::size_t i = 3; i < img.rgba.size(); i += 4) img.rgba[i] = 255;
  if (file.has_parent_path()) fs::create_directories(file.parent_path());
  plot::write_png(img, file);
}

void write_widget_map(const GuiState& s, const fs::path& file, int frame, std::string& last) {
  nlohmann::json j;
  const JobProgress& p = s.progress();
  j["job"] = {{"running", p.running}, {"kind", p.kind},     {"done", p.done},       {"total", p.total},
              {"ok", p.ok},           {"failed", p.failed}, {"message", p.message}, {"backend", p.backend}};
  j["job"]["resumed"] = p.resumed;
  j["job"]["out_file"] = p.out_file.string();
  nlohmann::json workers = nlohmann::json::array();
  for (const WorkerStatus& ws : p.workers)
    workers.push_back({{"label", ws.label},
                       {"state", std::string(to_string(ws.state))},
                       {"device", ws.device},
                       {"pid", ws.pid},
                       {"cases", ws.cases_done}});
  j["job"]["workers"] = workers;
  nlohmann::json w = nlohmann::json::object();
  for (const auto& [name, r] : s.widget_rects) w[name] = {r.x0, r.y0, r.x1, r.y1};
  j["widgets"] = w;
  // The series of the plot, or of every panel when it is faceted (each names its panel).
  nlohmann::json series = nlohmann::json::array();
  nlohmann::json panels = nlohmann::json::array();
  auto add_series = [&](const PlotWidget& widget, const std::string& panel) {
    if (!widget.has_plot) return;
    for (const plot::Series& ser : widget.plot.series)
      series.push_back({{"label", ser.label},
                        {"kernel", ser.kernel},
                        {"color", {ser.color.r, ser.color.g, ser.color.b}},
                        {"points", ser.x.size()},
                        {"visible", ser.visible},
                        {"panel", panel}});
  };
  add_series(s.plot, "");
  for (const PlotWidget& panel : s.plot_panels) {
    add_series(panel, panel.plot.title);
    panels.push_back(panel.plot.title);
  }
  j["plot"] = {
      {"title", s.plot_panels.empty() ? (s.plot.has_plot ? s.plot.plot.title : "") : s.plot_figure.title},
      {"series", series},
      {"panels", panels},
      {"facet", s.plot_figure.facet},
      {"message", s.plot.message}};
  nlohmann::json watched = nlohmann::json::array();
  for (const WatchedFile& f : s.watch.files()) {
    nlohmann::json versions = nlohmann::json::array();
    for (const WatchVersion& v : f.versions)
      versions.push_back({{"number", v.number},
                          {"state", to_string(v.state)},
                          {"ok", v.ok},
                          {"failed", v.failed},
                          {"diagnostics", v.diagnostics.size()},
                          {"message", v.message}});
    watched.push_back({{"path", f.path}, {"kernels", f.kernels}, {"versions", versions}});
  }
  j["watch"] = watched;
  j["runs"] = s.runs().size();
  j["selection"] = s.selection ? s.selection->case_id : "";
  j["dialog_open"] = s.dialog.kind != PathDialog::Kind::none;
  j["dialog_error"] = s.dialog.error;
  j["toast"] = s.toasts.empty() ? std::string() : s.toasts.back().text;
  std::string text = j.dump();
  if (text == last) return;
  last = text;
  j["frame"] = frame;
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(1) << "\n";
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
}

}  // namespace

void draw_menu_bar(GuiState& s) {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open results\xe2\x80\xa6", "Ctrl+O")) s.open_dialog(PathDialog::Kind::open);
    if (ImGui::BeginMenu("Open recent", !s.settings.recent.empty())) {
      for (const std::string& r : std::vector<std::string>(s.settings.recent))
        if (ImGui::MenuItem(r.c_str())) s.open_results(r);
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Replay", !s.settings.recent.empty() && !s.progress().running)) {
      for (const std::string& r : std::vector<std::string>(s.settings.recent))
        if (ImGui::MenuItem(r.c_str())) s.start_replay(r, 1.0);
      ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Close run", !s.runs().empty())) {
      for (const StoredRun& r : s.runs())
        if (ImGui::MenuItem(fmt::format("{}##close{}", r.label, r.key).c_str())) s.close_run(r.key);
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Export plot as PNG\xe2\x80\xa6", "Ctrl+E"))
      s.open_dialog(PathDialog::Kind::export_png);
    if (ImGui::MenuItem("Export roofline as PNG\xe2\x80\xa6"))
      s.open_dialog(PathDialog::Kind::export_roofline_png);
    if (ImGui::MenuItem("Export table as CSV\xe2\x80\xa6", "Ctrl+Shift+E"))
      s.open_dialog(PathDialog::Kind::export_csv);
    if (ImGui::MenuItem("Export run as JSONL\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::export_jsonl);
    if (ImGui::MenuItem("Export Markdown report\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::export_report);
    if (ImGui::MenuItem("Save sweep as preset\xe2\x80\xa6")) s.open_dialog(PathDialog::Kind::save_preset);
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) glfwSetWindowShouldClose(glfwGetCurrentContext(), 1);
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Run")) {
    if (ImGui::MenuItem("Run sweep", "F5", false, !s.progress().running)) s.start_sweep();
    if (ImGui::MenuItem("Resume sweep\xe2\x80\xa6", nullptr, false, !s.progress().running))
      s.open_dialog(PathDialog::Kind::resume_sweep);
    if (ImGui::MenuItem("Stop", "Esc", false, s.progress().running)) s.stop_job();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    if (ImGui::MenuItem("Reset layout")) s.settings.layout = LayoutSettings{};
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keyboard shortcuts", "F1")) s.show_help = true;
    ImGui::TextDisabled("font: %s", s.fonts.description().c_str());
    ImGui::EndMenu();
  }
  ImGui::EndMenuBar();
}

void handle_shortcuts(GuiState& s) {
  const ImGuiIO& io = ImGui::GetIO();
  const bool popup = ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId);
  if (ImGui::IsKeyPressed(GLFW_KEY_F5, false) && !popup) s.start_sweep();
  if (ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false) && !popup && !io.WantTextInput) s.stop_job();
  if (ImGui::IsKeyPressed(GLFW_KEY_F1, false)) s.show_help = !s.show_help;
  if (io.KeyCtrl && !popup) {
    if (ImGui::IsKeyPressed(GLFW_KEY_O, false)) s.open_dialog(PathDialog::Kind::open);
    if (ImGui::IsKeyPressed(GLFW_KEY_E, false))
      s.open_dialog(io.KeyShift ? PathDialog::Kind::export_csv : PathDialog::Kind::export_png);
    if (ImGui::IsKeyPressed(GLFW_KEY_Q, false)) glfwSetWindowShouldClose(glfwGetCurrentContext(), 1);
  }
}

int run_gui(const cli::GuiOptions& options) {
  std::string warning;
  const fs::path settings_file = settings_path();
  GuiSettings settings = options.no_persist ? GuiSettings{} : load_settings(settings_file, warning);
  int width = settings.width, height = settings.height;
  if (!options.size.empty() && !parse_size(options.size, width, height)) {
    std::fprintf(stderr,
                 "attnscope gui: --size %s: expected WxH with each side in 320..16384 px, e.g. 1600x1000\n",
                 options.size.c_str());
    return 2;
  }
  const bool frames_mode = options.frames > 0;
  const bool timing = !options.frame_stats.empty();

  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::fprintf(
        stderr, "attnscope gui: cannot open a window (GLFW could not initialise: no X11/Wayland display?)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 2);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(width, height, "attnscope", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "attnscope gui: cannot create an OpenGL 3.2 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  // No vsync when timing or rendering a fixed number of frames: measure the frame, not the display.
  glfwSwapInterval(frames_mode || timing ? 0 : 1);
  Gl gl;
  load(gl.Viewport, "glViewport");
  load(gl.ClearColor, "glClearColor");
  load(gl.Clear, "glClear");
  load(gl.Finish, "glFinish");
  load(gl.PixelStorei, "glPixelStorei");
  load(gl.ReadPixels, "glReadPixels");

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is ours (persistence.hpp), not imgui.ini
  float xscale = 1, yscale = 1;
  glfwGetWindowContentScale(window, &xscale, &yscale);
  const float scale = std::clamp(std::max(xscale, yscale), 1.0f, 4.0f);
  apply_theme(scale);

  int exit_code = 0;
  {
    GuiState state(options, std::move(settings), settings_file);
    if (!warning.empty()) state.notify(warning, true);
    state.fonts.load(io, scale);
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 150");

    std::vector<double> frame_ms, loop_ms, cpu_ms, state_ms;
    std::string last_map;
    bool screenshot_now = false;
    auto prev = std::chrono::steady_clock::now();
    for (int frame = 0; !glfwWindowShouldClose(window); ++frame) {
      // Idle: sleep until input (or 4 Hz for the status); live: 30 Hz, leaving the CPU to workers.
      if (frames_mode || timing)
        glfwPollEvents();
      else
        glfwWaitEventsTimeout(state.progress().running ? 1.0 / 30 : 0.25);
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = timing ? process_cpu_ms() : 0.0;
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      ImGui::NewFrame();
      const auto s0 = std::chrono::steady_clock::now();
      state.begin_frame();
      const auto s1 = std::chrono::steady_clock::now();
      draw_layout(state);
      handle_shortcuts(state);
      if (ImGui::IsKeyPressed(GLFW_KEY_F12, false)) screenshot_now = true;
      ImGui::Render();
      int fb_w = 0, fb_h = 0;
      glfwGetFramebufferSize(window, &fb_w, &fb_h);
      gl.Viewport(0, 0, fb_w, fb_h);
      gl.ClearColor(1.0f, 1.0f, 1.0f, 1.0f);
      gl.Clear(kGlColorBufferBit);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      if (timing) gl.Finish();  // count the rasterisation (llvmpipe renders here), not only the submission
      const auto t1 = std::chrono::steady_clock::now();
      frame_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      // The data side of the frame (store snapshot, plot and roofline rebuilds): what a live sweep adds.
      state_ms.push_back(std::chrono::duration<double, std::milli>(s1 - s0).count());
      if (timing) cpu_ms.push_back(process_cpu_ms() - c0);
      loop_ms.push_back(std::chrono::duration<double, std::milli>(t1 - prev).count());
      prev = t1;

      const bool last = frames_mode && frame + 1 >= options.frames;
      if (screenshot_now || (last && !options.screenshot.empty())) {
        const fs::path file = !options.screenshot.empty()
                                  ? fs::path(options.screenshot)
                                  : fs::path("screenshots") / ("attnscope-" + timestamp() + ".png");
        try {
          write_screenshot(gl, fb_w, fb_h, file);
          state.notify(fmt::format("screenshot: {} ({}x{})", file.string(), fb_w, fb_h));
        } catch (const std::exception& e) {
          state.notify(std::string("screenshot failed: ") + e.what(), true);
          exit_code = 1;
        }
        screenshot_now = false;
      }
      glfwSwapBuffers(window);
      if (!options.widget_map.empty()) write_widget_map(state, options.widget_map, frame, last_map);
      if (last) break;
    }

    int w = 0, h = 0;
    glfwGetWindowSize(window, &w, &h);
    if (w >= 640 && h >= 480 && options.size.empty()) state.settings.width = w, state.settings.height = h;
    state.save_settings_now();
    state.stop_job();
    if (timing) {
      nlohmann::json j;
      j["frame_ms"] = frame_ms;
      j["loop_ms"] = loop_ms;
      j["cpu_ms"] = cpu_ms;
      j["state_ms"] = state_ms;
      // Summaries over the frames after the first 30 (font atlas, first layouts).
      auto summary = [](std::vector<double> v) {
        if (v.size() > 30) v.erase(v.begin(), v.begin() + 30);
        if (v.empty()) return nlohmann::json::object();
        double sum = 0;
        for (double x : v) sum += x;
        std::sort(v.begin(), v.end());
        return nlohmann::json{{"mean", sum / static_cast<double>(v.size())},
                              {"p95", v[static_cast<std::size_t>(0.95 * static_cast<double>(v.size() - 1))]},
                              {"max", v.back()},
                              {"frames", v.size()}};
      };
      j["frame_ms_summary"] = summary(frame_ms);
      j["cpu_ms_summary"] = summary(cpu_ms);
      j["state_ms_summary"] = summary(state_ms);
      j["framebuffer"] = {w, h};
      j["vertices"] = io.MetricsRenderVertices;  // of the last frame
      j["indices"] = io.MetricsRenderIndices;
      std::size_t series = 0, points = 0;
      auto count = [&](const PlotWidget& p) {
        if (!p.has_plot) return;
        series += p.plot.series.size();
        for (const plot::Series& ser : p.plot.series) points += ser.x.size();
      };
      count(state.plot);
      for (const PlotWidget& p : state.plot_panels) count(p);
      j["series"] = series;
      j["points"] = points;
      std::ofstream out(options.frame_stats);
      out << j.dump(1) << "\n";
      if (!out) {
        std::fprintf(stderr, "attnscope gui: cannot write %s\n", options.frame_stats.c_str());
        exit_code = 1;
      }
    }
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
  }
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}

}  // namespace attn::gui
