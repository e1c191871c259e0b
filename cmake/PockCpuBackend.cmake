# The cpu backend (kernels/cpu), folded into pock_runtime. PockCpuLibraries.cmake finds XNNPACK,
# pthreadpool and OpenBLAS (POCK_HAVE_XNNPACK / POCK_HAVE_OPENBLAS); the parts of the backend that
# need a missing library compile out. Included after pock_runtime is defined.

# Vector code: loop functions are compiled per ISA through target_clones and vectorized under
# `#pragma omp simd` (kernels/cpu/simd.hpp). -fopenmp-simd honours the pragma without OpenMP's
# runtime; -ffp-contract=fast lets a*b+c become an FMA in the AVX2/AVX-512 clones (ISO C++ mode
# turns contraction off by default).
file(GLOB_RECURSE POCK_CPU_BACKEND_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/kernels/cpu/*.cpp)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  set_source_files_properties(${POCK_CPU_BACKEND_SOURCES} PROPERTIES COMPILE_OPTIONS "-fopenmp-simd;-ffp-contract=fast")
endif()

# Eigen (header-only) factors matrices in kernels/cpu/determinant.cpp: its headers for that file
# only, not the imported target (an installed pock_runtime must not make apps find Eigen).
set_property(SOURCE ${PROJECT_SOURCE_DIR}/kernels/cpu/determinant.cpp APPEND
             PROPERTY INCLUDE_DIRECTORIES $<TARGET_PROPERTY:Eigen3::Eigen,INTERFACE_INCLUDE_DIRECTORIES>)

# pthreadpool without XNNPACK still gives the backend's own loops their threads.
if(NOT POCK_HAVE_XNNPACK)
  find_library(POCK_PTHREADPOOL_LIBRARY NAMES pthreadpool)
  find_path(POCK_PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
  if(POCK_PTHREADPOOL_LIBRARY AND POCK_PTHREADPOOL_INCLUDE_DIR)
    target_include_directories(pock_runtime PRIVATE ${POCK_PTHREADPOOL_INCLUDE_DIR})
    target_link_libraries(pock_runtime PRIVATE ${POCK_PTHREADPOOL_LIBRARY})
    target_compile_definitions(pock_runtime PRIVATE POCK_HAVE_PTHREADPOOL=1)
  endif()
endif()

# benchmarks/gemm_peak: single-core sgemm GFLOP/s of OpenBLAS next to Eigen (benchmarks/RESULTS.md).
find_package(benchmark QUIET)
if(POCK_HAVE_OPENBLAS AND benchmark_FOUND AND NOT TARGET gemm_peak)
  add_executable(gemm_peak ${PROJECT_SOURCE_DIR}/benchmarks/gemm_peak.cpp)
  target_include_directories(gemm_peak PRIVATE ${POCK_OPENBLAS_INCLUDE_DIRS})
  target_link_libraries(gemm_peak PRIVATE benchmark::benchmark Eigen3::Eigen ${POCK_OPENBLAS_LIBRARIES})
  # Eigen's GEMM is compiled into the benchmark, so it gets the machine's ISA to compete fairly
  # with OpenBLAS, which picks its kernels at run time. Never applied to the library itself.
  if(NOT CMAKE_CROSSCOMPILING)
    target_compile_options(gemm_peak PRIVATE -march=native)
  endif()
  target_compile_definitions(gemm_peak PRIVATE EIGEN_DONT_PARALLELIZE)
endif()

# benchmarks/block_quant_bench: LinearQ on Q4_1 blocks next to f32 Linear on the cpu backend.
if(POCK_HAVE_OPENBLAS AND benchmark_FOUND AND NOT TARGET block_quant_bench)
  add_executable(block_quant_bench ${PROJECT_SOURCE_DIR}/benchmarks/block_quant_bench.cpp)
  target_include_directories(block_quant_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(block_quant_bench PRIVATE benchmark::benchmark pock_compiler)
endif()

# benchmarks/onnx_ops_bench: Resize, gather_scatter and GridSample on the cpu backend next to ref.
if(benchmark_FOUND AND NOT TARGET onnx_ops_bench)
  add_executable(onnx_ops_bench ${PROJECT_SOURCE_DIR}/benchmarks/onnx_ops_bench.cpp)
  target_link_libraries(onnx_ops_bench PRIVATE benchmark::benchmark pock_compiler)
endif()

# benchmarks/conv_winograd_bench: ResNet-18's 3x3 convolutions by Winograd, the other ways, oneDNN.
if(POCK_HAVE_OPENBLAS AND benchmark_FOUND AND NOT TARGET conv_winograd_bench)
  add_executable(conv_winograd_bench ${PROJECT_SOURCE_DIR}/benchmarks/conv_winograd_bench.cpp)
  target_include_directories(conv_winograd_bench PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(conv_winograd_bench PRIVATE benchmark::benchmark pock_compiler)
endif()
