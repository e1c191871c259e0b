#include "text/pre_tokenizer.hpp"

#include "text/unicode_class.hpp"

namespace pock::text {
namespace {

struct Char {
  size_t begin, end;  // bytes
  uint32_t cp;
  CharClass cls;
};

// UTF-8 decoding that never fails: a byte that does not start a valid sequence is one character
// of class "other".
std::vector<Char> decode(std::string_view s) {
  std::vector<Char> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    bool valid = n > 0 && i + n <= s.size();
    for (size_t k = 1; valid && k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      valid = (c >> 6) == 0x2;
      cp = (cp << 6) | (c & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too.
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    valid = valid && cp >= kMin[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    if (!valid) {
      out.push_back({i, i + 1, 0xFFFD, CharClass::kOther});
      ++i;
      continue;
    }
    out.push_back({i, i + n, cp, char_class(cp)});
    i += n;
  }
  return out;
}

// The length in characters of the GPT-2 regex's match at `i` of `c[0, n)`.
size_t match_at(const std::vector<Char>& c, size_t i, size_t n) {
  // Contractions: 's 't 're 've 'm 'll 'd (lower case, as GPT-2's regex).
  if (c[i].cp == '\'' && i + 1 < n) {
    const uint32_t a = c[i + 1].cp, b = i + 2 < n ? c[i + 2].cp : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  auto run = [&](size_t from, auto&& pred) {
    size_t j = from;
    while (j < n && pred(c[j].cls)) ++j;
    return j;
  };
  const size_t start = c[i].cp == ' ' && i + 1 < n && c[i + 1].cls != CharClass::kSpace ? i + 1 : i;
  const CharClass k = c[start].cls;
  if (k == CharClass::kLetter || k == CharClass::kNumber) {
    return run(start, [k](CharClass x) { return x == k; }) - i;
  }
  if (k == CharClass::kOther) {
    return run(start, [](CharClass x) { return x == CharClass::kOther; }) - i;
  }
  // Whitespace: the run, less its last character when a non-space follows (that one joins the
  // next word as its leading space), but never less than one character.
  const size_t end = run(i, [](CharClass x) { return x == CharClass::kSpace; });
  if (end == n || end - i == 1) return end - i;
  return end - 1 - i;
}

void split(const std::vector<Char>& c, size_t from, size_t to, std::vector<std::pair<size_t, size_t>>& out) {
  // match_at reads c[0, n): pieces are matched within their own range.
  std::vector<Char> piece(c.begin() + static_cast<std::ptrdiff_t>(from), c.begin() + static_cast<std::ptrdiff_t>(to));
  for (size_t i = 0; i < piece.size();) {
    const size_t len = match_at(piece, i, piece.size());
    out.emplace_back(piece[i].begin, piece[i + len - 1].end);
    i += len;
  }
}

}  // namespace

std::vector<std::pair<size_t, size_t>> pre_tokenize(std::string_view text, const PreTokenizerOptions& options) {
  const std::vector<Char> c = decode(text);
  std::vector<std::pair<size_t, size_t>> out;
  if (!options.isolate_digits) {
    split(c, 0, c.size(), out);
    return out;
  }
  size_t from = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i].cls != CharClass::kNumber) continue;
    if (from < i) split(c, from, i, out);
    out.emplace_back(c[i].begin, c[i].end);
    from = i + 1;
  }
  if (from < c.size()) split(c, from, c.size(), out);
  return out;
}

}  // namespace pock::text
