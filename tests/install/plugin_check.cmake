# Run by ctest as `cmake -P`: installs the build tree into a fresh prefix, builds examples/plugin
# out of tree against that prefix only (headers; it links nothing of PockEngine), then runs
# example_plugin_app, which loads the plugin by path, trains with it and compares with ref.
# Inputs (-D): BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR C_COMPILER C_FLAGS BUILD_TYPE APP.
include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)
require_vars(plugin_check.cmake BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR C_COMPILER APP)

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
step("configure plugin" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/examples/plugin" -B "${WORK_DIR}/build"
     -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
     "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_C_FLAGS=${C_FLAGS}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("build plugin" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("train with the plugin" "${APP}" "${WORK_DIR}/build/libpock_smooth_activations.so")
message(STATUS "example_plugin_app said:\n${last_output}")
