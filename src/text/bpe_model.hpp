// Byte-level BPE over one pre-tokenized word: the word's bytes become their single-byte tokens,
// then the adjacent pair with the lowest merge rank is merged (the leftmost of equals) until no
// adjacent pair has a merge. A priority queue over a linked list of symbols keeps a word of n
// bytes at O(n log n); a bounded cache remembers the ids of words seen before.
#pragma once
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pock/status.hpp"

namespace pock::text {

class BpeModel {
 public:
  // `tokens` in GPT-2's byte alphabet (byte_unicode.hpp); `merges` as "left right", lowest rank
  // first. An error names a merge that is not two vocabulary tokens making a third.
  static Result<BpeModel> create(std::vector<std::string> tokens, const std::vector<std::string>& merges, int32_t unknown_id,
                                 bool ignore_merges);
  BpeModel(BpeModel&& other) noexcept;
  BpeModel& operator=(BpeModel&&) = delete;

  // Appends the ids of `word` (bytes). A byte without a token becomes the unknown token (one for
  // a run of them), or nothing when there is no unknown token.
  void encode_word(std::string_view word, std::vector<int64_t>& out) const;

  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  BpeModel() = default;
  struct Merge {
    int32_t rank;
    int32_t merged;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void merge_word(std::string_view word, std::vector<int32_t>& ids) const;

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;   // token text -> id (a repeated text: the last id)
  std::unordered_map<uint64_t, Merge> merges_;     // (left, right) -> rank and result
  std::array<int32_t, 256> byte_token_{};          // byte -> id of its one-character token, -1: none
  int32_t unknown_ = -1;
  bool ignore_merges_ = false;

  static constexpr size_t kCacheWords = 1 << 16, kCachedWordBytes = 64;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

}  // namespace pock::text
