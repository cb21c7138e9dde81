// Hot reload in the GUI (kernel_watch.hpp): a saved kernel file becomes a loaded version, the
// current sweep planned for its kernels in the background, and a run of its own.
#include <fmt/format.h>

#include <algorithm>

#include "app/gui/gui_state.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "profiling/sweep/plan.hpp"

namespace attn::gui {

namespace {

WatchVersion* find_version(KernelWatch& w, const std::string& file, int number) {
  for (WatchedFile& f : w.files())
    if (f.path == file)
      for (WatchVersion& v : f.versions)
        if (v.number == number) return &v;
  return nullptr;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

bool GuiState::watch_file(const std::string& path) {
  std::string error;
  if (!watch.add(path, error)) {
    notify("cannot watch " + error, true);
    return false;
  }
  const WatchedFile& f = watch.files().back();
  std::string ids;
  for (const std::string& k : f.kernels) ids += (ids.empty() ? "" : ", ") + k;
  notify("watching " + f.path + " (" + ids + "): each save is a new version");
  m_form_dirty = true;  // its kernels join the kernel list
  return true;
}

void GuiState::step_watch() {
  watch.poll(std::chrono::steady_clock::now());

  // A version's sweep: its run is the first job started after it; done when that job ends.
  for (WatchedFile& f : watch.files())
    for (WatchVersion& v : f.versions) {
      if (v.state != WatchVersion::State::running) continue;
      if (v.run_key == 0 && m_progress.store_key != m_watch_store_key_before)
        v.run_key = m_progress.store_key;
      if (v.run_key == 0 || m_progress.running) continue;
      v.ok = v.failed = 0;
      if (const StoredRun* run = run_by_key(v.run_key)) {
        for (const CaseResult& c : run->data.cases) {
          if (c.status == Status::skipped) continue;
          const bool passed = c.status == Status::ok && (!c.correctness || c.correctness->pass);
          ++(passed ? v.ok : v.failed);
        }
      }
      v.state = WatchVersion::State::done;
      v.message = v.failed ? fmt::format("{} passed, {} failed the check or did not run: not a good version",
                                         v.ok, v.failed)
                           : fmt::format("{} cases passed the check", v.ok);
    }

  if (m_watch_plan) {
    if (m_watch_plan->cases.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
    WatchPlan wp = std::move(*m_watch_plan);
    m_watch_plan.reset();
    WatchVersion* v = find_version(watch, wp.file, wp.version);
    if (!v) return;
    try {
      const std::vector<Case> cases = wp.cases.get();
      m_form_dirty = true;  // the preview plans with the new version too (its compiles are cached now)
      if (std::all_of(cases.begin(), cases.end(), [](const Case& c) { return !c.skip_reason.empty(); })) {
        v->state = WatchVersion::State::load_error;
        v->message = cases.empty() ? "the sweep plans no case for its kernels"
                                   : "every case is skipped: " + cases.front().skip_reason;
        return;
      }
      m_watch_store_key_before = m_progress.store_key;
      if (!launch_sweep(wp.spec, wp.backend, cases, wp.form)) {
        v->state = WatchVersion::State::load_error;
        v->message = "its sweep did not start (see the message bar)";
        return;
      }
      v->state = WatchVersion::State::running;
      v->message = fmt::format("{} cases", cases.size());
    } catch (const SourceCompileError& e) {
      v->state = WatchVersion::State::compile_error;
      v->diagnostics = e.diagnostics();
      // The diagnostics name the watched file (its snapshot says `#line 1 "<watched>"`).
      v->message =
          v->diagnostics.empty() ? first_line(e.what()) : first_line(format_diagnostics({v->diagnostics[0]}));
      notify(fmt::format("v{} of {} does not compile: {}", v->number, wp.file,
                         v->diagnostics.empty() ? v->message : v->diagnostics.front().message),
             true);
    } catch (const std::exception& e) {
      v->state = WatchVersion::State::load_error;
      v->message = e.what();
    }
    return;
  }

  if (m_progress.running || m_runner.running()) return;
  auto [file, version] = watch.next_pending();
  if (!version) return;
  // Only the latest waiting save of a file runs; earlier ones still waiting are passed over.
  for (WatchVersion& v : file->versions)
    if (v.state == WatchVersion::State::pending) version = &v;
  for (WatchVersion& older : file->versions)
    if (older.state == WatchVersion::State::pending && older.number < version->number) {
      older.state = WatchVersion::State::superseded;
      older.message = fmt::format("v{} was saved before it ran", version->number);
    }
  if (!preview.valid) {
    version->state = WatchVersion::State::load_error;
    version->message = "the sweep form does not plan: " + preview.error;
    return;
  }
  try {
    file->kernels = load_plugin_version(version->snapshot, file->path, version->number).kernels;
  } catch (const PluginError& e) {
    version->state = WatchVersion::State::load_error;
    version->message = e.what();
    return;
  }
  WatchPlan wp;
  wp.file = file->path;
  wp.version = version->number;
  wp.spec = preview.spec;
  wp.spec.kernels = file->kernels;
  wp.spec.kernel_where.clear();
  wp.spec.out_dir.clear();  // a run directory of its own
  wp.backend = preview.backend;
  wp.form = settings.form;
  wp.form.kernels = file->kernels;
  wp.form.out.clear();
  // A kernel source compiles while the cuda plan is made, even where this sweep runs on the CPU:
  // compile errors show on a machine without a GPU too.
  wp.cases = std::async(std::launch::async, [spec = wp.spec, backend = wp.backend, source = file->source] {
    if (source && backend != Backend::cuda) (void)plan(spec, Backend::cuda);
    return plan(spec, backend);
  });
  m_watch_plan = std::move(wp);
  version->state = WatchVersion::State::planning;
  version->message = file->source ? "compiling and planning" : "planning";
}

}  // namespace attn::gui
