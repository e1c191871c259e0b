# Run by ctest as `cmake -P`: installs the build tree as an app developer would, then builds and
# runs examples/consumer against the installed prefix only, twice:
#   1. both components: pock_consumer_compile writes a blob, pock_consumer_app trains it;
#   2. the runtime component alone, installed into a prefix of its own (cmake --install
#      --component runtime), with find_package disabled for every package the compiler needs:
#      pock_consumer_app builds, links and trains the same blob.
# Inputs (-D): BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR C_COMPILER CXX_COMPILER CXX_FLAGS BUILD_TYPE.
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)
require_vars(consumer_check.cmake BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(installed include/pock/pock.h include/pock/engine.hpp include/pock/backend.h include/pock/types.hpp
                  include/pock/compiler/compiler.hpp include/pock/compiler/graph.hpp)
  if(NOT EXISTS "${prefix}/${installed}")
    message(FATAL_ERROR "install did not put ${installed} into the prefix")
  endif()
endforeach()
set(common -G "${GENERATOR}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
           "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)

step("configure consumer (runtime + compiler)" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/consumer"
     -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${prefix}" ${common})
step("build consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("compile a blob" "${WORK_DIR}/build/pock_consumer_compile" "${WORK_DIR}/consumer.pock")
step("train it" "${WORK_DIR}/build/pock_consumer_app" "${WORK_DIR}/consumer.pock")
message(STATUS "consumer said: ${last_output}")

set(runtime_prefix "${WORK_DIR}/runtime-prefix")
step("install the runtime component" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${runtime_prefix}"
     --component runtime)
if(EXISTS "${runtime_prefix}/include/pock/compiler" OR EXISTS "${runtime_prefix}/include/pock/compiler.hpp")
  message(FATAL_ERROR "the runtime component installed compiler headers")
endif()
set(disabled "")
foreach(package ONNX Protobuf nlohmann_json Eigen3)
  list(APPEND disabled "-DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON")
endforeach()
step("configure consumer (runtime alone, compiler packages disabled)" ${CMAKE_COMMAND}
     -S "${SOURCE_DIR}/examples/consumer" -B "${WORK_DIR}/build-runtime" "-DCMAKE_PREFIX_PATH=${runtime_prefix}"
     -DCONSUMER_RUNTIME_ONLY=ON ${disabled} ${common})
step("build the runtime-only app" ${CMAKE_COMMAND} --build "${WORK_DIR}/build-runtime")
step("train with the runtime alone" "${WORK_DIR}/build-runtime/pock_consumer_app" "${WORK_DIR}/consumer.pock")
message(STATUS "runtime-only app said: ${last_output}")
