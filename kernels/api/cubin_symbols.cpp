// ELF symbol reading for cubins (cubin_symbols.hpp). Only what a cubin needs: 64-bit, little-endian,
// one symbol table, section-relative symbol values.
#include "kernels/api/cubin_symbols.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace attn {

namespace {

constexpr std::uint32_t kSymtab = 2;
constexpr std::uint32_t kNobits = 8;

struct Section {
  std::uint32_t type = 0;
  std::uint64_t offset = 0, size = 0;
  std::uint32_t link = 0;
};

template <typename T>
T read_at(std::string_view elf, std::uint64_t at) {
  if (at + sizeof(T) > elf.size() || at + sizeof(T) < at)
    throw std::runtime_error("cubin: truncated at byte " + std::to_string(at));
  T v;
  std::memcpy(&v, elf.data() + at, sizeof(T));
  return v;
}

Section section(std::string_view elf, std::uint64_t shoff, std::uint16_t entsize, std::uint32_t i) {
  const std::uint64_t at = shoff + std::uint64_t{i} * entsize;
  return {read_at<std::uint32_t>(elf, at + 4), read_at<std::uint64_t>(elf, at + 0x18),
          read_at<std::uint64_t>(elf, at + 0x20), read_at<std::uint32_t>(elf, at + 0x28)};
}

}  // namespace

std::optional<std::string> cubin_symbol_bytes(std::string_view elf, std::string_view name) {
  if (elf.size() < 0x40 ||
      elf.substr(0, 4) !=
          "\x7f"
          "ELF" ||
      elf[4] != 2 || elf[5] != 1)
    throw std::runtime_error("cubin: not a 64-bit little-endian ELF file");
  const auto shoff = read_at<std::uint64_t>(elf, 0x28);
  const auto entsize = read_at<std::uint16_t>(elf, 0x3A);
  const auto count = read_at<std::uint16_t>(elf, 0x3C);
  for (std::uint32_t s = 0; s < count; ++s) {
    const Section symtab = section(elf, shoff, entsize, s);
    if (symtab.type != kSymtab) continue;
    const Section strtab = section(elf, shoff, entsize, symtab.link);
    for (std::uint64_t at = symtab.offset; at + 24 <= symtab.offset + symtab.size; at += 24) {
      const auto name_off = read_at<std::uint32_t>(elf, at);
      if (strtab.offset + name_off >= elf.size()) continue;
      const std::string_view rest = elf.substr(strtab.offset + name_off);
      if (rest.substr(0, rest.find('\0')) != name) continue;
      const auto shndx = read_at<std::uint16_t>(elf, at + 6);
      const auto value = read_at<std::uint64_t>(elf, at + 8);
      const auto size = read_at<std::uint64_t>(elf, at + 16);
      if (shndx == 0 || shndx >= count) return std::nullopt;  // undefined or special
      const Section data = section(elf, shoff, entsize, shndx);
      if (data.type == kNobits) return std::string(size, '\0');
      if (value + size > data.size || data.offset + value + size > elf.size())
        throw std::runtime_error("cubin: symbol " + std::string(name) + " lies outside its section");
      return std::string(elf.substr(data.offset + value, size));
    }
  }
  return std::nullopt;
}

}  // namespace attn
