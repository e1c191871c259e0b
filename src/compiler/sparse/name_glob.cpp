#include "compiler/sparse/name_glob.hpp"

#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace pock {
namespace {

// A {...} group: either a numeric range or literal alternatives.
struct Group {
  bool is_range = false;
  int64_t low = 0, high = 0;
  std::vector<std::string_view> alternatives;
  size_t end = 0;  // index just past the closing '}'
};

constexpr size_t kMaxDigits = 18;  // keeps every parsed number inside int64

bool all_digits(std::string_view s) {
  if (s.empty() || s.size() > kMaxDigits) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

int64_t to_number(std::string_view digits) {
  int64_t v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

// Parses the group opening at pattern[open]; the error text says what is wrong.
std::optional<Group> parse_group(std::string_view pattern, size_t open, std::string* error) {
  const size_t close = pattern.find('}', open + 1);
  const std::string where = "the group at position " + std::to_string(open);
  if (close == std::string_view::npos) {
    if (error) *error = "'{' at position " + std::to_string(open) + " has no closing '}'";
    return std::nullopt;
  }
  const std::string_view body = pattern.substr(open + 1, close - open - 1);
  if (body.find('{') != std::string_view::npos) {
    if (error) *error = where + " nests another '{'";
    return std::nullopt;
  }
  Group g;
  g.end = close + 1;
  const size_t dash = body.find('-');
  if (body.find(',') == std::string_view::npos && dash != std::string_view::npos &&
      all_digits(body.substr(0, dash)) && all_digits(body.substr(dash + 1))) {
    g.is_range = true;
    g.low = to_number(body.substr(0, dash));
    g.high = to_number(body.substr(dash + 1));
    if (g.low > g.high) {
      if (error) *error = where + " is the empty range {" + std::string(body) + "}";
      return std::nullopt;
    }
    return g;
  }
  size_t start = 0;
  while (true) {
    const size_t comma = body.find(',', start);
    const std::string_view alt = body.substr(start, comma == std::string_view::npos ? body.npos : comma - start);
    if (alt.empty()) {
      if (error) *error = where + " has an empty alternative (write {a-b} for a range, {x,y} for alternatives)";
      return std::nullopt;
    }
    g.alternatives.push_back(alt);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return g;
}

// Backtracking matcher. `failed` remembers (pattern, name) positions already known not to match,
// so patterns with several '*' stay O(pattern * name).
class Matcher {
 public:
  Matcher(std::string_view pattern, std::string_view name)
      : p_(pattern), n_(name), failed_((pattern.size() + 1) * (name.size() + 1), 0) {}

  bool match(size_t p, size_t n) {
    const size_t key = p * (n_.size() + 1) + n;
    if (failed_[key]) return false;
    const bool ok = match_uncached(p, n);
    if (!ok) failed_[key] = 1;
    return ok;
  }

 private:
  bool match_uncached(size_t p, size_t n) {
    if (p == p_.size()) return n == n_.size();
    const char c = p_[p];
    if (c == '*') {
      for (size_t k = n; k <= n_.size(); ++k) {
        if (match(p + 1, k)) return true;
      }
      return false;
    }
    if (c == '{') {
      const std::optional<Group> g = parse_group(p_, p, nullptr);
      if (!g) return false;
      return g->is_range ? match_number(*g, n) : match_alternative(*g, n);
    }
    if (n == n_.size()) return false;
    return (c == '?' || c == n_[n]) && match(p + 1, n + 1);
  }

  bool match_number(const Group& g, size_t n) {
    size_t digits = 0;
    while (n + digits < n_.size() && std::isdigit(static_cast<unsigned char>(n_[n + digits]))) ++digits;
    // The number must be written canonically: "0", or no leading zero.
    for (size_t len = 1; len <= digits && len <= kMaxDigits; ++len) {
      if (len > 1 && n_[n] == '0') break;
      const int64_t v = to_number(n_.substr(n, len));
      if (v >= g.low && v <= g.high && match(g.end, n + len)) return true;
    }
    return false;
  }

  bool match_alternative(const Group& g, size_t n) {
    for (std::string_view alt : g.alternatives) {
      if (n_.substr(n, alt.size()) == alt && match(g.end, n + alt.size())) return true;
    }
    return false;
  }

  std::string_view p_, n_;
  std::vector<char> failed_;  // char, not bool: a byte per entry, no proxy references
};

}  // namespace

Status validate_name_glob(std::string_view pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '}') {
      return Status(Code::kInvalidArgument, "'}' at position " + std::to_string(i) + " closes no '{'");
    }
    if (pattern[i] != '{') continue;
    std::string error;
    const std::optional<Group> g = parse_group(pattern, i, &error);
    if (!g) return Status(Code::kInvalidArgument, error);
    i = g->end - 1;
  }
  return Status::ok();
}

bool name_glob_match(std::string_view pattern, std::string_view name) {
  Matcher m(pattern, name);
  return m.match(0, 0);
}

}  // namespace pock
