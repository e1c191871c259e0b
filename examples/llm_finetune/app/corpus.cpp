#include "corpus.hpp"

#include <fstream>

namespace llm_finetune {

std::vector<std::string> read_fortune_entries(const std::vector<std::string>& files, std::string* error) {
  std::vector<std::string> entries;
  for (const std::string& path : files) {
    std::ifstream in(path);
    if (!in) {
      *error = "cannot read '" + path + "'";
      return {};
    }
    std::string line, entry;
    auto flush = [&] {
      while (!entry.empty() && entry.back() == '\n') entry.pop_back();
      if (!entry.empty()) entries.push_back(entry);
      entry.clear();
    };
    while (std::getline(in, line)) {
      if (line == "%") {
        flush();
      } else {
        entry += line;
        entry += '\n';
      }
    }
    flush();
  }
  return entries;
}

TokenRows pack_rows(const std::vector<std::vector<int64_t>>& documents, int64_t seq, int64_t eos) {
  std::vector<int64_t> stream;
  for (const auto& d : documents) {
    stream.insert(stream.end(), d.begin(), d.end());
    stream.push_back(eos);
  }
  TokenRows rows;
  rows.seq = seq;
  rows.rows = static_cast<int64_t>(stream.size()) / seq;
  rows.ids.assign(stream.begin(), stream.begin() + rows.rows * seq);
  return rows;
}

std::vector<int64_t> next_token_labels(const std::vector<int64_t>& ids, int64_t seq) {
  std::vector<int64_t> labels(ids.size(), -100);
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    if ((static_cast<int64_t>(i) + 1) % seq != 0) labels[i] = ids[i + 1];
  }
  return labels;
}

}  // namespace llm_finetune
