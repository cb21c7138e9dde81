// attnscope-gui: the attnscope command line with the GUI linked in. `attnscope-gui` alone or with
// GUI flags opens the workbench; any subcommand (worker, run, plot...) works as in `attnscope`,
// which is how the GUI's sweeps start their worker processes.
#include <cstring>
#include <vector>

#include "app/cli/cli.hpp"
#include "app/cli/gui_command.hpp"
#include "app/gui/gui_app.hpp"

int main(int argc, char** argv) {
  attn::cli::set_gui_entry(&attn::gui::run_gui);
  // `attnscope-gui --open x.jsonl` means `attnscope-gui gui --open x.jsonl`.
  if (argc > 1 && argv[1][0] == '-' && std::strcmp(argv[1], "--help") != 0 &&
      std::strcmp(argv[1], "-h") != 0 && std::strcmp(argv[1], "--version") != 0) {
    std::vector<char*> args(argv, argv + argc);
    static char gui[] = "gui";
    args.insert(args.begin() + 1, gui);
    return attn::cli::main(static_cast<int>(args.size()), args.data());
  }
  return attn::cli::main(argc, argv);
}
