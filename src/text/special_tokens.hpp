// Special tokens written in the text: control tokens ("<|im_start|>", matched when asked) and
// user-defined ones (always), found as whole strings before pre-tokenization, the leftmost
// first and the longest of those that start there, as Hugging Face's added vocabulary does.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pock::text {

class SpecialTokens {
 public:
  SpecialTokens() = default;
  // `types` as llama.cpp's token types (gguf_vocabulary.hpp), one per token.
  SpecialTokens(const std::vector<std::string>& tokens, const std::vector<int32_t>& types);

  struct Part {
    size_t begin, end;  // bytes of the text
    int64_t id;         // the special token [begin, end) is, or -1 for plain text
  };
  // Cuts `text` into plain text and special tokens, in order; control tokens only when
  // `match_control`.
  void split(std::string_view text, bool match_control, std::vector<Part>& parts) const;

  bool is_control(int64_t id) const;

 private:
  struct Entry {
    std::string text;
    int64_t id;
    bool control;
  };
  std::vector<Entry> entries_;               // longest first
  std::array<bool, 256> first_byte_{};       // a byte some entry starts with
  std::vector<int64_t> control_ids_;         // sorted
};

}  // namespace pock::text
