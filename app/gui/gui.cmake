# The desktop workbench (included by app/CMakeLists.txt when ATTNSCOPE_ENABLE_GUI): the
# attnscope.gui library (app/gui/*.cpp) and the attnscope-gui executable.
#
# Why a second executable: Debian ships GLFW only as a shared library and the GUI needs libGL, but
# `attnscope` must start on GPU machines that have neither. `attnscope gui` (and `attnscope` with
# no subcommand where a display exists) execs attnscope-gui from the same folder; attnscope-gui
# is the whole CLI plus the GUI, so its sweeps start `attnscope-gui worker` processes.
#
# Dear ImGui: Debian's libimgui-dev 1.86 ships a static libimgui.a holding the core and the GLFW
# and OpenGL3 backends (its backend sources also lie under /usr/share/doc/libimgui-dev/examples);
# linking the archive pulls in only the objects we use. Its font code calls stb_truetype/stb_rect_pack
# from libstb.a (static, libstb-dev).
find_library(ATTNSCOPE_IMGUI_LIBRARY NAMES libimgui.a imgui REQUIRED)
find_library(ATTNSCOPE_STB_LIBRARY NAMES libstb.a stb REQUIRED)
find_package(glfw3 REQUIRED)

file(GLOB _gui_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/gui/*.cpp)
list(REMOVE_ITEM _gui_sources ${CMAKE_CURRENT_SOURCE_DIR}/gui/gui_main.cpp)
add_library(attnscope.gui STATIC ${_gui_sources})
target_include_directories(attnscope.gui SYSTEM PUBLIC ${IMGUI_INCLUDE_DIR})
target_link_libraries(attnscope.gui PUBLIC attnscope.cli ${ATTNSCOPE_IMGUI_LIBRARY} ${ATTNSCOPE_STB_LIBRARY} glfw
                                           ${CMAKE_DL_LIBS} Threads::Threads
                                    PRIVATE attnscope.warnings fmt::fmt-header-only)

add_executable(attnscope-gui ${CMAKE_CURRENT_SOURCE_DIR}/gui/gui_main.cpp)
target_link_libraries(attnscope-gui PRIVATE attnscope.gui attnscope.warnings)
# Next to attnscope at the top of the build tree, where `attnscope gui` looks for it.
set_target_properties(attnscope-gui PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
