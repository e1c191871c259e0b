// pockc on hostile files: a blob whose metadata JSON is valid JSON of the wrong types, and an
// .npz whose zip directory claims gigabytes. pockc reports each and exits; it never aborts and
// never allocates what a size field alone claims.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/tiny_blob.hpp"
#include "tools/npz.hpp"

using namespace pock;
namespace fs = std::filesystem;

namespace {

struct Run {
  int exit_code = -1;  // -1: killed by a signal
  std::string output;
  long max_rss_kb = 0;
};

// Runs pockc with `args`, capturing stdout and stderr and the child's peak memory.
Run pockc(const std::vector<std::string>& args) {
  const fs::path out = fs::temp_directory_path() / ("pockc-out-" + std::to_string(::getpid()));
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::vector<char*> argv{const_cast<char*>(POCK_POCKC_PATH)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (!std::freopen(out.c_str(), "w", stdout) || ::dup2(::fileno(stdout), 2) < 0) ::_exit(120);
    ::execv(POCK_POCKC_PATH, argv.data());
    ::_exit(121);
  }
  int status = 0;
  rusage usage{};
  ::wait4(child, &status, 0, &usage);
  Run r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.max_rss_kb = usage.ru_maxrss;
  std::ifstream f(out);
  r.output.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  fs::remove(out);
  return r;
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("pockc-hostile-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d / name;
}

void write_bytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Sets the uncompressed size of every entry, in the local headers and the central directory.
void forge_zip_sizes(std::vector<uint8_t>& zip, uint32_t size) {
  for (size_t i = 0; i + 30 <= zip.size(); ++i) {
    if (std::memcmp(&zip[i], "PK\x03\x04", 4) == 0) std::memcpy(&zip[i + 22], &size, 4);
    if (i + 46 <= zip.size() && std::memcmp(&zip[i], "PK\x01\x02", 4) == 0) std::memcpy(&zip[i + 24], &size, 4);
  }
}

}  // namespace

TEST_CASE("pockc inspect reports metadata of the wrong types instead of aborting", "[tools][hostile]") {
  const fs::path blob = scratch("wrong-types.pock");
  ProgramSpec spec = test::tiny_program();
  spec.metadata = R"({"producer": 7, "memory": {"arena_peak_bytes": "big"}, "backend_choice": [1],
                      "memory_spaces": {"x": 1}, "op_phases": 3})";
  write_bytes(blob, test::write_tiny_blob(spec));
  const Run text = pockc({"inspect", blob.string()});
  INFO(text.output);
  CHECK(text.exit_code == 0);
  for (const char* field : {"producer", "memory", "backend_choice", "memory_spaces", "op_phases"}) {
    CHECK_THAT(text.output, Catch::Contains(std::string("metadata field '") + field + "' has the wrong type"));
  }
  CHECK(pockc({"inspect", blob.string(), "--json", "--ops"}).exit_code == 0);
  spec.metadata = "[1, 2, 3]";
  write_bytes(blob, test::write_tiny_blob(spec));
  const Run array = pockc({"inspect", blob.string()});
  CHECK(array.exit_code == 0);
  CHECK_THAT(array.output, Catch::Contains("the metadata is not a JSON object"));
  fs::remove_all(blob.parent_path());
}

TEST_CASE("an .npz claiming gigabytes is refused before anything is allocated", "[tools][hostile]") {
  const fs::path blob = scratch("tiny.pock");
  write_bytes(blob, test::tiny_blob());
  const std::vector<float> x = test::tiny::kInput;
  for (const bool compressed : {false, true}) {
    INFO((compressed ? "deflated" : "stored"));
    const fs::path data = scratch(compressed ? "deflated.npz" : "stored.npz");
    tools::NpzFile arrays;
    arrays["x"] = {"<f4", {2, 3}, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(x.data()),
                                                      reinterpret_cast<const uint8_t*>(x.data() + x.size()))};
    REQUIRE(tools::write_npz(data.string(), arrays, compressed).is_ok());
    std::ifstream in(data, std::ios::binary);
    std::vector<uint8_t> zip((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(zip.size() < 2048);
    forge_zip_sizes(zip, 0xF0000000u);  // one byte of the size field: 4 GB
    write_bytes(data, zip);
    const Run r = pockc({"infer", blob.string(), "--data", data.string(), "--out", scratch("out.npz").string()});
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.output, Catch::Contains("corrupt"));
    CHECK(r.max_rss_kb < 200 * 1024);  // pockc itself is tens of MB; the claim is 4 GB
  }
  fs::remove_all(blob.parent_path());
}
