#include "text/utf8.hpp"

#include <cstdint>

namespace pock::text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// How many bytes at s[0, n) form a well-formed character (Unicode's table 3-7), or the start of
// one that the text ends or breaks off: `complete` says which. 0: s[0] starts no character.
size_t well_formed_prefix(const unsigned char* s, size_t n, bool& complete) {
  complete = false;
  const unsigned char b = s[0];
  if (b < 0x80) {
    complete = true;
    return 1;
  }
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range; the rest are 80..BF
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    if (b == 0xE0) low = 0xA0;   // no overlong forms
    if (b == 0xED) high = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    if (b == 0xF0) low = 0x90;
    if (b == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  size_t i = 1;
  for (; i < length && i < n; ++i) {
    const unsigned char lo = i == 1 ? low : 0x80, hi = i == 1 ? high : 0xBF;
    if (s[i] < lo || s[i] > hi) return i;
  }
  complete = i == length;
  return i;
}

}  // namespace

std::string replace_invalid_bytes(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  std::string out;
  size_t copied = 0;  // text[0, copied) is in `out` already (only once something was replaced)
  bool replaced = false;
  for (size_t i = 0; i < text.size();) {
    bool complete = false;
    const size_t n = well_formed_prefix(s + i, text.size() - i, complete);
    if (complete) {
      i += n;
      continue;
    }
    if (!replaced) out.reserve(text.size() + 8);
    replaced = true;
    out.append(text.substr(copied, i - copied));
    out.append(kReplacement);
    i += 1;
    copied = i;
  }
  if (!replaced) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

void append_lossy_utf8(std::string& out, std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  for (size_t i = 0; i < bytes.size();) {
    bool complete = false;
    const size_t n = well_formed_prefix(s + i, bytes.size() - i, complete);
    if (complete) {
      out.append(bytes.substr(i, n));
    } else {
      out.append(kReplacement);
    }
    i += n == 0 ? 1 : n;
  }
}

}  // namespace pock::text
