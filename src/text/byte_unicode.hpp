// GPT-2's byte-level alphabet: every byte stands for a printable code point, so that a byte-level
// BPE vocabulary is text. The printable Latin-1 bytes stand for themselves, the other 68 bytes
// (controls, space, DEL, NBSP, soft hyphen) for U+0100, U+0101, ... in byte order.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace pock::text {

// The code point byte `b` stands for.
uint32_t byte_code_point(uint8_t b);

// `bytes` in the alphabet: each byte as its code point, UTF-8 encoded.
std::string bytes_to_alphabet(std::string_view bytes);

// Appends the bytes `token` (UTF-8 in the alphabet) stands for to `out` and returns true; returns
// false and appends nothing when some character of `token` is outside the alphabet or `token`
// is not valid UTF-8.
bool alphabet_to_bytes(std::string_view token, std::string& out);

}  // namespace pock::text
