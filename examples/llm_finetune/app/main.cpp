// The on-device half of examples/llm_finetune: fine-tunes a compiled SmolLM2 blob on text and
// reports what changed. It links the runtime and pock_text (the tokenizer), not the compiler.
//
//   llm_finetune BLOB --gguf MODEL.gguf --corpus FILE [--corpus FILE ...] --steps N
//                [--threads T] [--samples K] [--new-tokens N] [--data-out DIR] [--summary S.json]
//
// The corpus (fortune(6) files) is split by entry: every tenth entry is held out. Training
// entries are tokenized, each followed by the end-of-text token, and packed into rows of the
// blob's sequence length; step k trains on batch k mod (rows / B). Held-out perplexity is
// exp(mean token loss) over the held-out rows (the eval function), before and after; greedy
// samples continue the first words of K held-out entries, before and after, through the blob's
// decode function when it has one. --data-out writes the token rows as .npy files for the
// PyTorch side to train on the same tokens.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../personalize/app/process_stats.hpp"
#include "corpus.hpp"
#include "npy_file.hpp"
#include "pock/engine.hpp"
#include "pock/generate.hpp"
#include "pock/tokenizer.hpp"

namespace {

using namespace llm_finetune;
using personalize::peak_rss_bytes;
using personalize::wall_seconds;

struct Args {
  std::string blob, gguf, data_out, summary;
  std::vector<std::string> corpus;
  int64_t steps = 0, threads = 0, samples = 3, new_tokens = 24;
};

bool parse_args(int argc, char** argv, Args* a) {
  if (argc < 2) return false;
  a->blob = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--gguf") a->gguf = value;
    else if (key == "--corpus") a->corpus.push_back(value);
    else if (key == "--data-out") a->data_out = value;
    else if (key == "--summary") a->summary = value;
    else if (key == "--steps") a->steps = std::atoll(value.c_str());
    else if (key == "--threads") a->threads = std::atoll(value.c_str());
    else if (key == "--samples") a->samples = std::atoll(value.c_str());
    else if (key == "--new-tokens") a->new_tokens = std::atoll(value.c_str());
    else return false;
  }
  return argc % 2 == 0 && !a->gguf.empty() && !a->corpus.empty() && a->steps >= 0;
}

int fail(const std::string& what, const pock::Status& status) {
  std::fprintf(stderr, "llm_finetune: %s: %s\n", what.c_str(), status.to_string().c_str());
  return 1;
}

// Rows [begin, begin + batch) of `rows` with their next-token labels, into the engine.
pock::Status feed(pock::Engine& engine, const TokenRows& rows, int64_t begin, int64_t batch) {
  const auto first = rows.ids.begin() + begin * rows.seq;
  const std::vector<int64_t> ids(first, first + batch * rows.seq);
  POCK_RETURN_IF_ERROR(engine.set_input("input_ids", ids));
  return engine.set_input("label", next_token_labels(ids, rows.seq));
}

// exp of the mean token loss over every whole batch of `rows` (the eval function's mean loss
// weighs each row's seq - 1 labelled tokens alike).
pock::Result<double> perplexity(pock::Engine& engine, const TokenRows& rows, int64_t batch) {
  double total = 0.0;
  int64_t batches = 0;
  for (int64_t r = 0; r + batch <= rows.rows; r += batch, ++batches) {
    POCK_RETURN_IF_ERROR(feed(engine, rows, r, batch));
    POCK_ASSIGN_OR_RETURN(const float loss, engine.eval_step());
    total += loss;
  }
  if (batches == 0) return pock::Status(pock::Code::kInvalidArgument, "fewer held-out rows than one batch");
  return std::exp(total / static_cast<double>(batches));
}

pock::Result<std::vector<std::string>> samples(pock::Engine& engine, const pock::Tokenizer& text,
                                               const std::vector<std::vector<int64_t>>& prompts, int64_t new_tokens) {
  pock::SamplingOptions o;
  o.max_new_tokens = new_tokens;
  o.stop_tokens = {text.eos_id()};
  std::vector<std::string> out;
  for (const auto& p : prompts) {
    POCK_ASSIGN_OR_RETURN(const std::vector<int64_t> ids, pock::generate(engine, p, o));
    std::vector<int64_t> generated(ids.begin() + static_cast<std::ptrdiff_t>(p.size()), ids.end());
    if (!generated.empty() && generated.back() == text.eos_id()) generated.pop_back();  // the end, not text
    POCK_ASSIGN_OR_RETURN(std::string sample, text.decode(generated));
    out.push_back(std::move(sample));
  }
  return out;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c < 0x20) out += ' ';
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

void print_samples(const char* when, const std::vector<std::string>& prompts, const std::vector<std::string>& texts) {
  std::printf("samples %s:\n", when);
  for (size_t i = 0; i < texts.size(); ++i) std::printf("  [%s]%s\n", prompts[i].c_str(), texts[i].c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, &a)) {
    std::fprintf(stderr, "usage: llm_finetune BLOB --gguf MODEL.gguf --corpus FILE... --steps N [--threads T] [--samples K]\n"
                         "                    [--new-tokens N] [--data-out DIR] [--summary SUMMARY.json]\n");
    return 2;
  }
  auto text = pock::Tokenizer::from_gguf_file(a.gguf);
  if (!text.is_ok()) return fail("tokenizer of " + a.gguf, text.status());
  std::string error;
  const std::vector<std::string> entries = read_fortune_entries(a.corpus, &error);
  if (!error.empty() || entries.empty()) return fail("corpus", pock::Status(pock::Code::kIo, error.empty() ? "no entries" : error));

  pock::EngineConfig config;
  config.num_threads = static_cast<int>(a.threads);
  auto engine = pock::Engine::open(a.blob, config);
  if (!engine.is_ok()) return fail("open " + a.blob, engine.status());
  auto ids_info = engine->info("input_ids");
  if (!ids_info.is_ok() || ids_info->rank != 2) return fail("the blob's input_ids", ids_info.status());
  const int64_t batch = ids_info->dims[0], seq = ids_info->dims[1];

  std::vector<std::vector<int64_t>> train_docs, held_docs, prompts;
  std::vector<std::string> prompt_texts;
  int64_t tokens_in_corpus = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    auto ids = text->encode(entries[i]);
    if (!ids.is_ok()) return fail("tokenize", ids.status());
    tokens_in_corpus += static_cast<int64_t>(ids->size());
    if (i % 10 != 9) {
      train_docs.push_back(std::move(ids.value()));
      continue;
    }
    // The first few words of a held-out entry are a prompt the model has not trained on.
    if (static_cast<int64_t>(prompts.size()) < a.samples && ids->size() > 8) {
      prompts.emplace_back(ids->begin(), ids->begin() + 4);
      prompt_texts.push_back(text->decode(prompts.back()).value());
    }
    held_docs.push_back(std::move(ids.value()));
  }
  const TokenRows train = pack_rows(train_docs, seq, text->eos_id());
  const TokenRows held = pack_rows(held_docs, seq, text->eos_id());
  std::printf("corpus: %zu entries, %lld tokens: %lld training rows and %lld held-out rows of %lld tokens\n", entries.size(),
              static_cast<long long>(tokens_in_corpus), static_cast<long long>(train.rows), static_cast<long long>(held.rows),
              static_cast<long long>(seq));
  if (train.rows < batch) return fail("corpus", pock::Status(pock::Code::kInvalidArgument, "fewer training rows than one batch"));
  if (!a.data_out.empty()) {
    std::vector<int64_t> padded_prompts;
    for (const auto& p : prompts) padded_prompts.insert(padded_prompts.end(), p.begin(), p.end());
    const bool ok = write_npy_i64(a.data_out + "/train.npy", {train.rows, seq}, train.ids) &&
                    write_npy_i64(a.data_out + "/held_out.npy", {held.rows, seq}, held.ids) &&
                    write_npy_i64(a.data_out + "/prompts.npy", {static_cast<int64_t>(prompts.size()), 4}, padded_prompts);
    if (!ok) return fail("--data-out", pock::Status(pock::Code::kIo, "cannot write " + a.data_out));
  }

  auto ppl_before = perplexity(engine.value(), held, batch);
  if (!ppl_before.is_ok()) return fail("held-out perplexity", ppl_before.status());
  auto before = samples(engine.value(), text.value(), prompts, a.new_tokens);
  if (!before.is_ok()) return fail("generation", before.status());
  std::printf("held-out perplexity before: %.3f\n", ppl_before.value());
  print_samples("before", prompt_texts, before.value());

  const int64_t batches = train.rows / batch;
  std::vector<double> step_seconds;
  std::vector<float> losses;
  for (int64_t step = 0; step < a.steps; ++step) {
    if (auto s = feed(engine.value(), train, (step % batches) * batch, batch); !s.is_ok()) return fail("feed", s);
    const double start = wall_seconds();
    auto loss = engine->train_step();
    if (!loss.is_ok()) return fail("train step " + std::to_string(step), loss.status());
    step_seconds.push_back(wall_seconds() - start);
    losses.push_back(loss.value());
    const double rate = static_cast<double>(batch * seq) / step_seconds.back();
    std::fprintf(stderr, "\rstep %lld/%lld  loss %.4f  %.0f tokens/s   ", static_cast<long long>(step + 1),
                 static_cast<long long>(a.steps), loss.value(), rate);
  }
  std::fprintf(stderr, "\n");
  // The first step pays for first touches of the arena: the rate is the steady steps'.
  double steady = 0.0;
  for (size_t i = step_seconds.size() > 1 ? 1 : 0; i < step_seconds.size(); ++i) steady += step_seconds[i];
  const size_t counted = step_seconds.size() > 1 ? step_seconds.size() - 1 : step_seconds.size();
  const double tokens_per_s = counted ? static_cast<double>(batch * seq * static_cast<int64_t>(counted)) / steady : 0.0;

  auto ppl_after = perplexity(engine.value(), held, batch);
  if (!ppl_after.is_ok()) return fail("held-out perplexity", ppl_after.status());
  auto after = samples(engine.value(), text.value(), prompts, a.new_tokens);
  if (!after.is_ok()) return fail("generation", after.status());
  std::printf("held-out perplexity after %lld steps: %.3f\n", static_cast<long long>(a.steps), ppl_after.value());
  print_samples("after", prompt_texts, after.value());
  const double rss_mb = static_cast<double>(peak_rss_bytes()) / (1 << 20);
  std::printf("training: %.1f tokens/s (batch %lld x %lld), peak RSS %.0f MB\n", tokens_per_s, static_cast<long long>(batch),
              static_cast<long long>(seq), rss_mb);

  if (!a.summary.empty()) {
    FILE* f = std::fopen(a.summary.c_str(), "w");
    if (!f) return fail("--summary", pock::Status(pock::Code::kIo, "cannot write " + a.summary));
    std::fprintf(f, "{\"ppl_before\": %.6f, \"ppl_after\": %.6f, \"tokens_per_s\": %.3f, \"peak_rss_mb\": %.1f, \"losses\": [",
                 ppl_before.value(), ppl_after.value(), tokens_per_s, rss_mb);
    for (size_t i = 0; i < losses.size(); ++i) std::fprintf(f, "%s%.6f", i ? ", " : "", losses[i]);
    std::fprintf(f, "], \"prompts\": [");
    for (size_t i = 0; i < prompt_texts.size(); ++i) std::fprintf(f, "%s%s", i ? ", " : "", json_string(prompt_texts[i]).c_str());
    for (const auto& [key, list] : {std::pair{"samples_before", &before.value()}, std::pair{"samples_after", &after.value()}}) {
      std::fprintf(f, "], \"%s\": [", key);
      for (size_t i = 0; i < list->size(); ++i) std::fprintf(f, "%s%s", i ? ", " : "", json_string((*list)[i]).c_str());
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  return 0;
}
