// The attnscope command line: subcommand dispatch and the exit-code contract
// (0 done, 1 a case failed its check or faulted, 2 bad input).
#pragma once

namespace attn::cli {

int main(int argc, char** argv);

}  // namespace attn::cli
