# The CPU kernels (cpu.reference, cpu.flash): built in every configuration.
attnscope_family_cpu_sources(*.cpp)
