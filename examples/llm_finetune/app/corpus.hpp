// The fine-tuning text: fortune(6) files (entries separated by lines holding only "%"), split
// into training and held-out entries, tokenized and packed into rows of a fixed length.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace llm_finetune {

// Every entry of every file, in file order; an unreadable file is an error message in `error`.
std::vector<std::string> read_fortune_entries(const std::vector<std::string>& files, std::string* error);

// Token rows [rows, seq], row-major: documents one after the other, each followed by `eos`, cut
// into rows of `seq` tokens (the tail that does not fill a row is dropped).
struct TokenRows {
  int64_t rows = 0, seq = 0;
  std::vector<int64_t> ids;
};
TokenRows pack_rows(const std::vector<std::vector<int64_t>>& documents, int64_t seq, int64_t eos);

// Labels for next-token training: label[r, s] = ids[r, s + 1], and -100 (ignored) at the end.
std::vector<int64_t> next_token_labels(const std::vector<int64_t>& ids, int64_t seq);

}  // namespace llm_finetune
