// attnscope entry point: hands argv to the CLI.
#include "app/cli/cli.hpp"

int main(int argc, char** argv) { return attn::cli::main(argc, argv); }
