// The embedded TTF bytes: plot.cmake points ATTNSCOPE_FONT_REGULAR/_BOLD at the build machine's
// DejaVu Sans files and the assembler's .incbin copies them into .rodata, so the binary carries
// its font to machines that have none. Without them, embedded_font() is empty.
#include <span>

#include "reports/plot/font.hpp"

#define ATTN_EMBED(sym, file)                                                         \
  asm(".section .rodata\n"                                                            \
      ".balign 16\n"                                                                  \
      ".globl " #sym                                                                  \
      "_begin\n"                                                                      \
      ".hidden " #sym "_begin\n" #sym                                                 \
      "_begin:\n"                                                                     \
      ".incbin \"" file                                                               \
      "\"\n"                                                                          \
      ".globl " #sym                                                                  \
      "_end\n"                                                                        \
      ".hidden " #sym "_end\n" #sym                                                   \
      "_end:\n"                                                                       \
      ".previous\n");                                                                 \
  extern "C" const unsigned char sym##_begin[] __attribute__((visibility("hidden"))); \
  extern "C" const unsigned char sym##_end[] __attribute__((visibility("hidden")));

#if defined(ATTNSCOPE_FONT_REGULAR)
ATTN_EMBED(attn_font_regular, ATTNSCOPE_FONT_REGULAR)
#endif
#if defined(ATTNSCOPE_FONT_BOLD)
ATTN_EMBED(attn_font_bold, ATTNSCOPE_FONT_BOLD)
#endif

namespace attn::plot {

std::span<const unsigned char> embedded_font(bool bold) {
#if defined(ATTNSCOPE_FONT_BOLD)
  if (bold) return {attn_font_bold_begin, attn_font_bold_end};
#endif
#if defined(ATTNSCOPE_FONT_REGULAR)
  if (!bold) return {attn_font_regular_begin, attn_font_regular_end};
#endif
  (void)bold;
  return {};
}

}  // namespace attn::plot
