# Build settings of reports/plot/ (included by reports/CMakeLists.txt): the fonts embedded into
# the binary and the header-only stb (libstb-dev) used for TrueType and PNG.
find_path(STB_INCLUDE_DIR stb/stb_truetype.h REQUIRED)
target_include_directories(attnscope.reports SYSTEM PRIVATE ${STB_INCLUDE_DIR})
find_file(ATTNSCOPE_FONT_REGULAR_FILE DejaVuSans.ttf PATHS /usr/share/fonts/truetype/dejavu ${PROJECT_SOURCE_DIR}/assets/fonts
          NO_DEFAULT_PATH)
find_file(ATTNSCOPE_FONT_BOLD_FILE DejaVuSans-Bold.ttf PATHS /usr/share/fonts/truetype/dejavu ${PROJECT_SOURCE_DIR}/assets/fonts
          NO_DEFAULT_PATH)
set(_font_defs "")
set(_font_deps "")
if(ATTNSCOPE_FONT_REGULAR_FILE)
  list(APPEND _font_defs ATTNSCOPE_FONT_REGULAR="${ATTNSCOPE_FONT_REGULAR_FILE}")
  list(APPEND _font_deps ${ATTNSCOPE_FONT_REGULAR_FILE})
  if(ATTNSCOPE_FONT_BOLD_FILE)
    list(APPEND _font_defs ATTNSCOPE_FONT_BOLD="${ATTNSCOPE_FONT_BOLD_FILE}")
    list(APPEND _font_deps ${ATTNSCOPE_FONT_BOLD_FILE})
  endif()
  message(STATUS "attnscope: plots embed ${ATTNSCOPE_FONT_REGULAR_FILE}")
else()
  message(STATUS "attnscope: no DejaVuSans.ttf to embed; plots read $ATTNSCOPE_FONT at run time")
endif()
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/plot/font_data.cpp PROPERTIES
  COMPILE_DEFINITIONS "${_font_defs}" OBJECT_DEPENDS "${_font_deps}")
