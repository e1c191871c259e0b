#include "text/byte_unicode.hpp"

#include <array>

namespace pock::text {
namespace {

bool prints_as_itself(uint32_t b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

struct Alphabet {
  std::array<uint32_t, 256> code_point{};
  std::array<int16_t, 324> byte_of{};  // code point -> byte; -1 for none (the alphabet ends below 256 + 68)
  std::array<std::string, 256> utf8;
  Alphabet() {
    byte_of.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t cp = prints_as_itself(b) ? b : next++;
      code_point[b] = cp;
      byte_of[cp] = static_cast<int16_t>(b);
      // Every code point here is below U+0800: one or two UTF-8 bytes.
      utf8[b] = cp < 0x80 ? std::string(1, static_cast<char>(cp))
                          : std::string{static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

uint32_t byte_code_point(uint8_t b) { return alphabet().code_point[b]; }

std::string bytes_to_alphabet(std::string_view bytes) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) out += a.utf8[static_cast<uint8_t>(c)];
  return out;
}

bool alphabet_to_bytes(std::string_view token, std::string& out) {
  const Alphabet& a = alphabet();
  const size_t start = out.size();
  for (size_t i = 0; i < token.size();) {
    const auto b0 = static_cast<uint8_t>(token[i]);
    uint32_t cp = 0;
    if (b0 < 0x80) {
      cp = b0;
      i += 1;
    } else if ((b0 >> 5) == 0x6 && i + 1 < token.size() && (static_cast<uint8_t>(token[i + 1]) >> 6) == 0x2) {
      cp = (static_cast<uint32_t>(b0 & 0x1F) << 6) | (static_cast<uint8_t>(token[i + 1]) & 0x3F);
      i += 2;
      if (cp < 0x80) cp = UINT32_MAX;  // an overlong form is not a character
    } else {
      cp = UINT32_MAX;  // three bytes or more, or broken: outside the alphabet either way
    }
    if (cp >= a.byte_of.size() || a.byte_of[cp] < 0) {
      out.resize(start);
      return false;
    }
    out += static_cast<char>(a.byte_of[cp]);
  }
  return true;
}

}  // namespace pock::text
