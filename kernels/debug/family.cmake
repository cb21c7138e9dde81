# The debug kernels (kernels/debug/debug_kernels.hpp): the CPU half always, the CUDA half with CUDA.
attnscope_family_cpu_sources(*.cpp)
attnscope_family_cuda_sources(*.cu)
