# Run by ctest as `cmake -P`: installs the build tree into a fresh prefix, then configures, builds
# and runs examples/consumer against that prefix only, as an app developer would after
# `cmake --install`. Inputs (-D): BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR C_COMPILER CXX_COMPILER
# CXX_FLAGS BUILD_TYPE.
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)
require_vars(consumer_check.cmake BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(installed include/pock/pock.h include/pock/engine.hpp include/pock/compiler.hpp include/pock/backend.h)
  if(NOT EXISTS "${prefix}/${installed}")
    message(FATAL_ERROR "install did not put ${installed} into the prefix")
  endif()
endforeach()

step("configure consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/consumer" -B "${WORK_DIR}/build"
     -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
     "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("run consumer" "${WORK_DIR}/build/pock_consumer")
message(STATUS "consumer said: ${last_output}")
