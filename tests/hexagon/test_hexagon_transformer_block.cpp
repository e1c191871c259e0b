// A BERT-style transformer block trained with the Hexagon plugin equals the CPU-only run step by
// step: the attention projections, the attention MatMuls, the MLP (Linear + Gelu) and their
// gradients on the DSP (placed by its supports_op), embeddings, LayerNorm, Softmax, reshapes and
// the loss on the CPU. Full backpropagation, and sparse (the block's MLP and the classifier).
#include <random>

#include "hexagon/hexagon_training.hpp"
#include "pock/compiler/models.hpp"

using namespace pock;
using namespace pock::test;

namespace {

constexpr int64_t kBatch = 2, kSeq = 6, kVocab = 24, kLabels = 3;

Graph tiny_bert() {
  models::BertConfig c;
  c.batch = kBatch;
  c.seq_len = kSeq;
  c.vocab_size = kVocab;
  c.hidden_size = 16;
  c.num_layers = 1;
  c.num_heads = 2;
  c.intermediate_size = 32;
  c.max_position_embeddings = kSeq;
  c.hidden_dropout = 0.0;  // dropout masks are random: the two runs must see the same graph
  c.attention_dropout = 0.0;
  c.num_labels = kLabels;
  c.initializer_range = 0.2;  // large enough that the block's gradients matter in f32
  c.seed = 3;
  auto g = models::bert_classifier(c);
  REQUIRE(g.is_ok());
  return std::move(g.value());
}

float bert_step(Engine& e, int index) {
  std::mt19937 gen(900u + static_cast<uint32_t>(index));
  std::vector<int64_t> ids, labels;
  for (int64_t i = 0; i < kBatch * kSeq; ++i) ids.push_back(static_cast<int64_t>(gen() % kVocab));
  for (int64_t i = 0; i < kBatch; ++i) labels.push_back(static_cast<int64_t>(gen() % kLabels));
  REQUIRE(e.set_input("input_ids", ids).is_ok());
  REQUIRE(e.set_input("label", labels).is_ok());
  return checked_train_step(e);
}


}  // namespace

TEST_CASE("hexagon: a transformer block trained on the DSP equals the CPU-only run, step by step", "[hexagon][train]") {
  if (!hexagon_available()) return;
  Recipe full = classifier_recipe();
  full.loss.logits = "logits";
  Recipe sparse = full;
  sparse.trainable = {rule_match("encoder.layer.0.intermediate.*"), rule_match("encoder.layer.0.output.dense.*"),
                      rule_match("classifier.*")};
  for (const auto& [name, recipe] : {std::pair{"adam, full", full}, std::pair{"adam, MLP and classifier", sparse}}) {
    SECTION(name) {
      MlpRun dsp = open_model(tiny_bert(), recipe, true);
      MlpRun cpu = open_model(tiny_bert(), recipe, false);
      // q, k, v, attention output, MLP in and out, pooler, classifier.
      CHECK(train_ops_on_dsp(dsp.spec, "Linear") >= 8);
      CHECK(train_ops_on_dsp(dsp.spec, "Gelu") == 1);
      CHECK(train_ops_on_dsp(dsp.spec, "LinearWeightGrad") >= 2);
      if (recipe.trainable.empty()) CHECK(train_ops_on_dsp(dsp.spec, "MatMul") >= 4);  // scores, context and their gradients
      const std::vector<std::string> names = trainable_names(dsp.spec);
      REQUIRE_FALSE(names.empty());
      for (int s = 0; s < 6; ++s) {
        const float got = bert_step(*dsp.engine, s);
        const float want = bert_step(*cpu.engine, s);
        INFO("step " << s << ": dsp " << got << ", cpu " << want);
        CHECK(std::fabs(got - want) <= 2e-5f * std::max(1.0f, std::fabs(want)));
        for (const std::string& n : names) {
          // The key bias adds q.b to every score of a row, which softmax cancels: its gradient is
          // zero but for rounding, and Adam divides that rounding by its own square root into
          // lr-sized steps of either sign, on any two backends that round differently.
          if (n == "encoder.layer.0.attention.self.key.bias") continue;
          INFO(n);
          CHECK(relative_difference(parameter(*dsp.engine, n), parameter(*cpu.engine, n)) <= 5e-5);
        }
      }
    }
  }
}
