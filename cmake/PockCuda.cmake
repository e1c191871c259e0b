# CUDA backend. POCK_WITH_CUDA: AUTO (on when nvcc is found), ON (nvcc required), OFF.
# nvcc is looked for in CMAKE_CUDA_COMPILER, $CUDACXX, PATH, $CUDA_HOME/bin, $CUDA_PATH/bin and
# /usr/local/cuda/bin. Results: POCK_HAVE_CUDA, POCK_CUDA_INCLUDE_DIRS, POCK_CUDA_LIBRARIES (the CUDA
# runtime and cuDNN, linked), POCK_CUBLAS_LIBRARY (cuBLAS's soname, opened when a GPU is used).
set(POCK_HAVE_CUDA OFF)
set(POCK_CUDA_INCLUDE_DIRS "")
set(POCK_CUDA_LIBRARIES "")
string(TOUPPER "${POCK_WITH_CUDA}" _pock_with_cuda)
if(NOT _pock_with_cuda MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
  message(FATAL_ERROR "POCK_WITH_CUDA must be AUTO, ON or OFF (got '${POCK_WITH_CUDA}')")
endif()

if(NOT _pock_with_cuda MATCHES "^(OFF|FALSE|NO|0)$")
  if(NOT CMAKE_CUDA_COMPILER AND DEFINED ENV{CUDACXX})
    set(CMAKE_CUDA_COMPILER "$ENV{CUDACXX}")
  endif()
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(POCK_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATH_SUFFIXES bin PATHS /usr/local/cuda/bin)
    if(POCK_NVCC)
      set(CMAKE_CUDA_COMPILER "${POCK_NVCC}")
    endif()
  endif()

  if(CMAKE_CUDA_COMPILER)
    # Jetson Orin (sm_87) and data-centre Hopper (sm_90); override with -DCMAKE_CUDA_ARCHITECTURES.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "87;90" CACHE STRING "CUDA architectures to build for")
    endif()
    enable_language(CUDA)
    # C++17 for device code: CMake 3.25 knows no C++20 flag for nvcc 13. Headers that .cu files
    # include (pock/status.hpp) stay C++17-clean.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    # cuDNN ships beside the toolkit (or in the system's library path) without a CMake package.
    find_library(POCK_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_PATH PATH_SUFFIXES lib64 lib)
    find_path(POCK_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_PATH PATH_SUFFIXES include)
    if(NOT POCK_CUDNN_LIBRARY OR NOT POCK_CUDNN_INCLUDE_DIR)
      message(FATAL_ERROR "CUDA backend: cuDNN 9 (libcudnn, cudnn.h) was not found beside the toolkit; set CUDNN_PATH, "
                          "or configure with -DPOCK_WITH_CUDA=OFF")
    endif()
    set(POCK_HAVE_CUDA ON)
    # cuBLAS is opened at run time (kernels/cuda/cublas_api.cpp): linked, it would cost every
    # process about 210 MB of resident memory at load, GPU or not. Its headers come from the
    # toolkit; the soname from its version. cuDNN's front library is small and loads its parts
    # itself, so it is linked.
    set(POCK_CUBLAS_LIBRARY "libcublas.so.${CUDAToolkit_VERSION_MAJOR}")
    set(POCK_CUDA_LIBRARIES CUDA::cudart_static ${POCK_CUDNN_LIBRARY} ${CMAKE_DL_LIBS})
    list(APPEND POCK_CUDA_INCLUDE_DIRS ${POCK_CUDNN_INCLUDE_DIR})
    # CUDA 13 moved CCCL (libcu++, CUB, Thrust) under include/cccl; host code needs it too.
    foreach(dir ${CUDAToolkit_INCLUDE_DIRS})
      list(APPEND POCK_CUDA_INCLUDE_DIRS ${dir})
      if(EXISTS "${dir}/cccl")
        list(APPEND POCK_CUDA_INCLUDE_DIRS "${dir}/cccl")
      endif()
    endforeach()
    message(STATUS "CUDA: ${CMAKE_CUDA_COMPILER} (${CUDAToolkit_VERSION}), architectures ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(_pock_with_cuda STREQUAL "AUTO")
    message(STATUS "CUDA: nvcc not found, building without the CUDA backend")
  else()
    message(FATAL_ERROR "POCK_WITH_CUDA=ON but nvcc was not found: set CUDA_HOME or CMAKE_CUDA_COMPILER")
  endif()
endif()
