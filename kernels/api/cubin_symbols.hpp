// The initial bytes of a global in a CUDA binary (an ELF cubin), read without a GPU: how attnscope
// learns the launch a kernel source states (ATTN_LAUNCH, include/attnscope/kernel_source.h).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace attn {

// The `size` bytes symbol `name` is initialised with, or nullopt when the cubin has no such symbol.
// Zero-initialised symbols read as zeros. Throws std::runtime_error for bytes that are not a 64-bit
// little-endian ELF file, or a symbol whose data lies outside the file.
std::optional<std::string> cubin_symbol_bytes(std::string_view elf, std::string_view name);

}  // namespace attn
