// The parts of the native module pockengine._pockengine, each registered by its own file.
#pragma once
#include <nanobind/nanobind.h>

namespace pock::python {

void bind_compile(nanobind::module_& m);  // compile.cpp
void bind_engine(nanobind::module_& m);   // engine.cpp

}  // namespace pock::python
