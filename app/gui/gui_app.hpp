// The GUI's entry point: window, ImGui context, the tiled main window, the frame loop, and the
// test/benchmark hooks (--frames, --screenshot, --frame-stats, --widget-map).
#pragma once
#include "app/cli/gui_command.hpp"

namespace attn::gui {

// Returns the process exit code: 0, or 1 when no window could be opened (the message says why).
int run_gui(const cli::GuiOptions& options);

}  // namespace attn::gui
