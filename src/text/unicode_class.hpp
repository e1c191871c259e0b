// What the GPT-2 family's pre-tokenizer regex asks of a code point: \p{L} (a letter), \p{N} (a
// number) or \s (Unicode White_Space). The letter and number ranges are generated
// (make_unicode_tables.py); White_Space is a short fixed list.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pock::text {

struct CodeRange {
  uint32_t first, last;
};
extern const CodeRange kLetterRanges[];
extern const size_t kLetterRanges_count;
extern const CodeRange kNumberRanges[];
extern const size_t kNumberRanges_count;

enum class CharClass : uint8_t { kLetter, kNumber, kSpace, kOther };
CharClass char_class(uint32_t cp);

}  // namespace pock::text
