// Shared by the fuzz targets: the small models their seeds and fixtures are compiled from, and
// the checksum repair that lets a mutated blob or checkpoint get past its CRCs into the parsers
// (a forger recomputes checksums too; only the verifier stands between them and the engine).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "pock/compiler/compiler.hpp"

namespace pock::fuzz {

// A seed model: a name (file name of its seed) and its blob.
struct SeedBlob {
  std::string name;
  std::vector<uint8_t> bytes;
};

// MLP with Adam + gradient clipping, a CNN with sparse SGD + momentum, and an inference-only
// MLP: between them most verifier paths (optional inputs, variadic ops, updates, schedules).
std::vector<SeedBlob> seed_blobs();

// Embedding -> LayerNorm -> Linear -> Gelu -> Linear, and its blob (Adam + clipping), for
// targets that need a graph or an engine.
Graph mlp_graph();
// The MLP's blob, for targets that need an engine (checkpoint loading).
std::vector<uint8_t> mlp_blob();

// Recomputes the header and section CRCs of a blob-shaped buffer where its section table can be
// read; a buffer too broken for that is left as it is.
void repair_blob_checksums(std::vector<uint8_t>& bytes);
// Recomputes a checkpoint's trailing CRC.
void repair_checkpoint_checksum(std::vector<uint8_t>& bytes);

}  // namespace pock::fuzz
