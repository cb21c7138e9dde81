# ffpa.l1 and ffpa.wgmma: their instantiations are built for some of the build's architectures only.
if(NOT ATTNSCOPE_ENABLE_CUDA)
  return()
endif()
# ffpa.l1 needs more shared memory a block (102-197 KiB) than sm_86/sm_89 have (99 KiB): those
# GPUs refuse it at prepare time and run sm_80 code otherwise, so it skips their targets, which
# keeps its 24 heavy kernels off one architecture of the cold build.
file(GLOB _ffpa_sources CONFIGURE_DEPENDS ${ATTNSCOPE_FAMILY_DIR}/*.cu ${ATTNSCOPE_FAMILY_DIR}/inst/*.cu)
set(_ffpa_archs ${CMAKE_CUDA_ARCHITECTURES})
list(REMOVE_ITEM _ffpa_archs 86 86-real 89 89-real)
if(NOT _ffpa_archs)
  set(_ffpa_archs ${CMAKE_CUDA_ARCHITECTURES})
endif()
attnscope_kernel_objects(attnscope.kernels.ffpa "${_ffpa_archs}" ${_ffpa_sources})
# ffpa.wgmma uses Hopper's warpgroup MMAs: its kernels are built for sm_90a alone, and only when
# that target is in the build; otherwise its registry entries say so (ATTNSCOPE_HAS_FFPA_WGMMA=0).
target_sources(attnscope.kernels PRIVATE ${ATTNSCOPE_FAMILY_DIR}/wgmma/ffpa_wgmma.cu)
set(_wgmma_archs ${CMAKE_CUDA_ARCHITECTURES})
list(FILTER _wgmma_archs INCLUDE REGEX "^90a")
if(_wgmma_archs)
  file(GLOB _wgmma_sources CONFIGURE_DEPENDS ${ATTNSCOPE_FAMILY_DIR}/wgmma/inst/*.cu)
  attnscope_kernel_objects(attnscope.kernels.ffpa_wgmma "${_wgmma_archs}" ${_wgmma_sources})
  attnscope_wgmma_guard(attnscope.kernels.ffpa_wgmma)
  target_compile_definitions(attnscope.kernels PUBLIC ATTNSCOPE_HAS_FFPA_WGMMA=1)
else()
  target_compile_definitions(attnscope.kernels PUBLIC ATTNSCOPE_HAS_FFPA_WGMMA=0)
endif()
