#include "frontend/safetensors/checkpoint.hpp"

#include <filesystem>

#include "frontend/safetensors/untrusted_json.hpp"

namespace pock::hf {
namespace {

namespace fs = std::filesystem;

Status bad(const std::string& what) { return Status(Code::kInvalidArgument, what); }

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A shard named by the index must be a file of the folder itself: a name with a directory part
// ("../x", "/etc/x") would read outside the checkpoint.
bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos;
}

// model.safetensors.index.json's weight_map: tensor name -> shard file name.
Result<std::map<std::string, std::string>> weight_map(const std::string& index_path) {
  POCK_ASSIGN_OR_RETURN(const nlohmann::json index, read_untrusted_json_file(index_path));
  const auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (map == index.end() || !map->is_object()) return bad("'" + index_path + "' has no weight_map object");
  std::map<std::string, std::string> out;
  for (const auto& [tensor, shard] : map->items()) {
    if (!shard.is_string() || !plain_file_name(shard.get<std::string>())) {
      return bad("'" + index_path + "': the shard of '" + tensor + "' is not a file name in the folder");
    }
    out[tensor] = shard.get<std::string>();
  }
  return out;
}

}  // namespace

Status Checkpoint::add(const uint8_t* data, size_t size, const std::string& file_name) {
  auto parsed = safetensors::File::parse(data, size);
  if (!parsed.is_ok()) return Status(parsed.status().code(), file_name + ": " + parsed.status().message());
  files_.push_back(std::make_unique<safetensors::File>(std::move(parsed.value())));
  const safetensors::File* file = files_.back().get();
  for (const safetensors::TensorInfo& t : file->tensors()) {
    const auto [at, added] = tensors_.emplace(t.name, Source{file, &t, file_name});
    if (!added) return bad("tensor '" + t.name + "' is in both " + at->second.file_name + " and " + file_name);
  }
  return Status::ok();
}

Result<Checkpoint> Checkpoint::from_bytes(const uint8_t* data, size_t size, const std::string& file_name) {
  Checkpoint c;
  POCK_RETURN_IF_ERROR(c.add(data, size, file_name));
  return c;
}

Result<Checkpoint> Checkpoint::open_folder(const std::string& folder) {
  Checkpoint c;
  auto map_and_add = [&](const std::string& name) -> Status {
    auto mapped = std::make_unique<MappedFile>();
    POCK_RETURN_IF_ERROR(mapped->open((fs::path(folder) / name).string()));
    c.maps_.push_back(std::move(mapped));
    return c.add(c.maps_.back()->data(), c.maps_.back()->size(), name);
  };
  const fs::path index_path = fs::path(folder) / "model.safetensors.index.json";
  std::error_code ec;
  if (!fs::exists(index_path, ec)) {
    if (!fs::exists(fs::path(folder) / "model.safetensors", ec)) {
      return Status(Code::kNotFound, "'" + folder + "' has neither model.safetensors nor model.safetensors.index.json");
    }
    POCK_RETURN_IF_ERROR(map_and_add("model.safetensors"));
    return c;
  }
  POCK_ASSIGN_OR_RETURN(const auto index, weight_map(index_path.string()));
  std::set<std::string> shards;
  for (const auto& [tensor, shard] : index) shards.insert(shard);
  for (const std::string& shard : shards) POCK_RETURN_IF_ERROR(map_and_add(shard));
  for (const auto& [name, source] : c.tensors_) {
    const auto listed = index.find(name);
    if (listed == index.end()) return bad("tensor '" + name + "' of " + source.file_name + " is not in the index");
    if (listed->second != source.file_name) {
      return bad("the index puts '" + name + "' in " + listed->second + " but it is in " + source.file_name);
    }
  }
  for (const auto& [tensor, shard] : index) {
    if (!c.tensors_.count(tensor)) return bad("the index lists '" + tensor + "' in " + shard + ", which does not have it");
  }
  return c;
}

const safetensors::TensorInfo* Checkpoint::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.info;
}

std::vector<std::string> Checkpoint::names_starting_with(const std::string& prefix) const {
  std::vector<std::string> out;
  for (auto it = tensors_.lower_bound(prefix); it != tensors_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    out.push_back(it->first);
  }
  return out;
}

Status Checkpoint::check(const std::vector<ExpectedTensor>& expected, const std::set<std::string>& ignored) const {
  std::set<std::string> accounted = ignored;
  for (const ExpectedTensor& e : expected) {
    const safetensors::TensorInfo* t = find(e.checkpoint_name);
    if (!t) return Status(Code::kNotFound, "the checkpoint has no tensor '" + e.checkpoint_name + "'");
    if (t->shape != e.shape) {
      return Status(Code::kShapeMismatch, "tensor '" + e.checkpoint_name + "' has shape " + shape_text(t->shape) +
                                              " but the configuration implies " + shape_text(e.shape));
    }
    accounted.insert(e.checkpoint_name);
  }
  for (const auto& [name, source] : tensors_) {
    if (!accounted.count(name)) {
      return Status(Code::kUnsupportedOp, "tensor '" + name + "' of " + source.file_name +
                                              " has no place in the model its configuration describes");
    }
  }
  return Status::ok();
}

Result<models::WeightMap> Checkpoint::read(const std::vector<ExpectedTensor>& expected) const {
  models::WeightMap weights;
  for (const ExpectedTensor& e : expected) {
    const auto it = tensors_.find(e.checkpoint_name);
    if (it == tensors_.end()) return Status(Code::kNotFound, "the checkpoint has no tensor '" + e.checkpoint_name + "'");
    const Status converted = safetensors::to_f32(*it->second.file, *it->second.info, &weights[e.graph_name]);
    if (!converted.is_ok()) return Status(converted.code(), it->second.file_name + ": " + converted.message());
  }
  return weights;
}

}  // namespace pock::hf
