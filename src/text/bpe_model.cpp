#include "text/bpe_model.hpp"

#include <climits>
#include <queue>

#include "text/byte_unicode.hpp"

namespace pock::text {

BpeModel::BpeModel(BpeModel&& other) noexcept
    : tokens_(std::move(other.tokens_)),
      ids_(std::move(other.ids_)),
      merges_(std::move(other.merges_)),
      byte_token_(other.byte_token_),
      unknown_(other.unknown_),
      ignore_merges_(other.ignore_merges_) {}

Result<BpeModel> BpeModel::create(std::vector<std::string> tokens, const std::vector<std::string>& merges, int32_t unknown_id,
                                  bool ignore_merges) {
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) return Status(Code::kInvalidArgument, "too many tokens");
  if (merges.size() > static_cast<size_t>(INT32_MAX)) return Status(Code::kInvalidArgument, "too many merges");
  BpeModel m;
  m.tokens_ = std::move(tokens);
  m.unknown_ = unknown_id;
  m.ignore_merges_ = ignore_merges;
  m.ids_.reserve(m.tokens_.size());
  for (size_t i = 0; i < m.tokens_.size(); ++i) m.ids_[m.tokens_[i]] = static_cast<int32_t>(i);
  for (int b = 0; b < 256; ++b) {
    auto it = m.ids_.find(bytes_to_alphabet(std::string(1, static_cast<char>(b))));
    m.byte_token_[static_cast<size_t>(b)] = it == m.ids_.end() ? -1 : it->second;
  }
  auto id_of = [&m](std::string_view text) {
    auto it = m.ids_.find(std::string(text));
    return it == m.ids_.end() ? -1 : it->second;
  };
  m.merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& text = merges[rank];
    auto bad = [&](const std::string& why) {
      return Status(Code::kInvalidArgument, "merge " + std::to_string(rank) + " '" + text + "' " + why);
    };
    const size_t space = text.find(' ');
    if (space == 0 || space == std::string::npos || space + 1 == text.size() || text.find(' ', space + 1) != std::string::npos) {
      return bad("is not 'left right'");
    }
    const std::string_view left = std::string_view(text).substr(0, space), right = std::string_view(text).substr(space + 1);
    const int32_t l = id_of(left), r = id_of(right);
    if (l < 0 || r < 0) return bad("names a token the vocabulary does not have");
    const int32_t merged = id_of(std::string(left) + std::string(right));
    if (merged < 0) return bad("makes a token the vocabulary does not have");
    // A pair listed twice keeps its last rank, as Hugging Face's tokenizers does.
    m.merges_[pair_key(l, r)] = Merge{static_cast<int32_t>(rank), merged};
  }
  return m;
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& ids) const {
  if (ignore_merges_) {
    if (auto whole = ids_.find(bytes_to_alphabet(word)); whole != ids_.end()) {
      ids.push_back(whole->second);
      return;
    }
  }
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // neighbours still in the word, -1 at the ends
  };
  constexpr int32_t kGone = -2;  // merged into its left neighbour
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  bool unknown_run = false;
  for (const char c : word) {
    const int32_t id = byte_token_[static_cast<uint8_t>(c)];
    if (id < 0 && (unknown_ < 0 || unknown_run)) continue;  // dropped, or fused into the unknown before it
    unknown_run = id < 0;
    const auto at = static_cast<int32_t>(symbols.size());
    symbols.push_back({id < 0 ? unknown_ : id, at - 1, at + 1});
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;

  struct Candidate {
    int32_t rank, left, merged;
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto offer = [&](int32_t left) {
    if (left < 0 || symbols[static_cast<size_t>(left)].next < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    auto it = merges_.find(pair_key(l.id, symbols[static_cast<size_t>(l.next)].id));
    if (it != merges_.end()) queue.push({it->second.rank, left, it->second.merged});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) offer(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[static_cast<size_t>(top.left)];
    if (left.id == kGone || left.next < 0) continue;
    // The pair may have changed since it was queued: merge only what is still there.
    auto it = merges_.find(pair_key(left.id, symbols[static_cast<size_t>(left.next)].id));
    if (it == merges_.end() || it->second.merged != top.merged) continue;
    Symbol& right = symbols[static_cast<size_t>(left.next)];
    left.id = top.merged;
    right.id = kGone;
    left.next = right.next;
    if (left.next >= 0) symbols[static_cast<size_t>(left.next)].prev = top.left;
    offer(left.prev);
    offer(top.left);
  }
  for (const Symbol& s : symbols) {
    if (s.id != kGone) ids.push_back(s.id);
  }
}

void BpeModel::encode_word(std::string_view word, std::vector<int64_t>& out) const {
  if (word.size() > kCachedWordBytes) {  // rare, and would fill the cache with little reuse
    std::vector<int32_t> ids;
    merge_word(word, ids);
    out.insert(out.end(), ids.begin(), ids.end());
    return;
  }
  const std::string key(word);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (auto hit = cache_.find(key); hit != cache_.end()) {
      out.insert(out.end(), hit->second.begin(), hit->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  merge_word(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() < kCacheWords) cache_.emplace(key, std::move(ids));
}

}  // namespace pock::text
