#include "text/unicode_class.hpp"

#include <algorithm>

namespace pock::text {
namespace {

bool in(const CodeRange* ranges, size_t count, uint32_t cp) {
  const CodeRange* end = ranges + count;
  const CodeRange* it = std::upper_bound(ranges, end, cp, [](uint32_t v, const CodeRange& r) { return v < r.first; });
  return it != ranges && cp <= (it - 1)->last;
}

// Unicode's White_Space property (PropList.txt), what \s means in the regex engines the reference
// tokenizers use.
bool is_white_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

}  // namespace

CharClass char_class(uint32_t cp) {
  if (cp < 0x80) {  // the common case without a search
    if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return CharClass::kLetter;
    if (cp >= '0' && cp <= '9') return CharClass::kNumber;
    return is_white_space(cp) ? CharClass::kSpace : CharClass::kOther;
  }
  if (is_white_space(cp)) return CharClass::kSpace;
  if (in(kLetterRanges, kLetterRanges_count, cp)) return CharClass::kLetter;
  if (in(kNumberRanges, kNumberRanges_count, cp)) return CharClass::kNumber;
  return CharClass::kOther;
}

}  // namespace pock::text
