// A backend profile (what `pockc tune` writes) in a temporary file for CompileOptions::profile_path,
// removed when it goes out of scope.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "compiler/backend_profile.hpp"

namespace pock::test {

struct TempProfile {
  explicit TempProfile(const BackendProfile& p)
      : path((std::filesystem::temp_directory_path() / ("pock_profile_" + std::to_string(::getpid()) + "_" +
                                                        std::to_string(counter++) + ".json")).string()) {
    std::ofstream(path) << backend_profile_json(p);
  }
  ~TempProfile() { std::filesystem::remove(path); }
  TempProfile(const TempProfile&) = delete;
  TempProfile& operator=(const TempProfile&) = delete;
  std::string path;
  static inline int counter = 0;
};

}  // namespace pock::test
