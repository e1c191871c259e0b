#include "text/special_tokens.hpp"

#include <algorithm>

#include "text/gguf_vocabulary.hpp"

namespace pock::text {

SpecialTokens::SpecialTokens(const std::vector<std::string>& tokens, const std::vector<int32_t>& types) {
  for (size_t i = 0; i < tokens.size() && i < types.size(); ++i) {
    const bool control = types[i] == kControl;
    if (control) control_ids_.push_back(static_cast<int64_t>(i));
    if ((control || types[i] == kUserDefined) && !tokens[i].empty()) {
      entries_.push_back({tokens[i], static_cast<int64_t>(i), control});
      first_byte_[static_cast<uint8_t>(tokens[i][0])] = true;
    }
  }
  std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.text.size() > b.text.size(); });
}

void SpecialTokens::split(std::string_view text, bool match_control, std::vector<Part>& parts) const {
  size_t plain_from = 0;
  for (size_t i = 0; i < text.size();) {
    const Entry* hit = nullptr;
    if (first_byte_[static_cast<uint8_t>(text[i])]) {
      for (const Entry& e : entries_) {
        if ((match_control || !e.control) && text.compare(i, e.text.size(), e.text) == 0) {
          hit = &e;
          break;
        }
      }
    }
    if (!hit) {
      ++i;
      continue;
    }
    if (plain_from < i) parts.push_back({plain_from, i, -1});
    parts.push_back({i, i + hit->text.size(), hit->id});
    i += hit->text.size();
    plain_from = i;
  }
  if (plain_from < text.size()) parts.push_back({plain_from, text.size(), -1});
}

bool SpecialTokens::is_control(int64_t id) const { return std::binary_search(control_ids_.begin(), control_ids_.end(), id); }

}  // namespace pock::text
