// UTF-8 validity, the two ways the reference tokenizers repair invalid text: llama.cpp's
// tokenizer replaces every byte that does not start a valid character by U+FFFD before it
// splits; Hugging Face's decoder (Rust's from_utf8_lossy) replaces each maximal prefix of a
// character that cannot be completed by one U+FFFD (Unicode's "maximal subpart" practice).
#pragma once
#include <string>
#include <string_view>

namespace pock::text {

// `text` when it is valid UTF-8; otherwise a copy with each offending byte replaced by U+FFFD.
std::string replace_invalid_bytes(std::string_view text);

// Appends `bytes` to `out`, each maximal invalid subpart replaced by one U+FFFD.
void append_lossy_utf8(std::string& out, std::string_view bytes);

}  // namespace pock::text
