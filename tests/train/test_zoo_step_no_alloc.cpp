// A training step of each model family allocates nothing after the first: small instances of the
// zoo's MobileNetV2, ResNet, BERT and LLaMA under full BP and a sparse scheme, so that every kernel
// those steps bind on this build (XNNPACK convolutions, the conv gradients, folded BatchNorms,
// attention's data movement, the loss) is inside the counted region. Global operator new is
// replaced in this binary (support/counting_new.hpp); inputs stay at zero (valid ids and labels).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/cpu/conv_winograd.hpp"
#include "pock/compiler/compiler.hpp"
#include "pock/compiler/models.hpp"
#include "pock/pock.h"
#include "support/blob_inputs.hpp"
#include "support/counting_new.hpp"

using namespace pock;
using namespace pock::test;
using namespace pock::models;

namespace {

Recipe recipe_for(bool sparse, bool tokens) {
  Recipe r;
  r.loss.type = "cross_entropy";
  r.loss.logits = "logits";
  r.optimizer.type = "sgd";
  r.optimizer.lr = 1e-3;
  r.optimizer.momentum = 0.9;
  if (sparse) {
    // CNNs: the paper's biases-everywhere scheme (BatchNorm shifts under frozen scales);
    // transformers: the last block.
    r.trainable = {tokens ? TrainableRule{.layers = "last:6"} : TrainableRule{.bias_only = true}};
    r.freeze_batchnorm_stats = true;
  }
  return r;
}

void check_steps_allocate_nothing(const std::string& what, Result<Graph> graph, bool tokens) {
  REQUIRE(graph.is_ok());
  for (bool sparse : {false, true}) {
    INFO(what << (sparse ? ", sparse" : ", full BP"));
    const Recipe recipe = recipe_for(sparse, tokens);
    auto blob = compile(*graph, &recipe);
    REQUIRE(blob.is_ok());
    pock_engine_options options{};
    options.num_threads = 1;
    pock_engine* engine = nullptr;
    REQUIRE(pock_engine_open_buffer(blob->data(), blob->size(), &options, &engine) == POCK_OK);
    REQUIRE(test::set_inputs_to_zero(engine, blob.value()));
    float loss = 0;
    pock_status status = pock_engine_train_step(engine, &loss);  // the first step may warm up lazily
    INFO(pock_engine_last_error(engine));
    REQUIRE(status == POCK_OK);
    const long n = allocations_during([&] {
      for (int s = 0; s < 3 && status == POCK_OK; ++s) status = pock_engine_train_step(engine, &loss);
    });
    CHECK(status == POCK_OK);
    CHECK(n == 0);
    pock_engine_close(engine);
  }
}

ResNetConfig small_resnet() {
  ResNetConfig rn;
  rn.batch = 2;
  rn.resolution = 32;
  rn.num_classes = 10;
  rn.width = 8;
  return rn;
}

}  // namespace

TEST_CASE("training steps of the zoo's model families allocate nothing", "[train][alloc]") {
  MobileNetV2Config mb;
  mb.batch = 2;
  mb.resolution = 32;
  mb.num_classes = 10;
  mb.width_mult = 0.25;
  check_steps_allocate_nothing("MobileNetV2", mobilenet_v2(mb), false);

  check_steps_allocate_nothing("ResNet-18", resnet18(small_resnet()), false);

  BertConfig bert;
  bert.batch = 2;
  bert.seq_len = 16;
  bert.vocab_size = 64;
  bert.hidden_size = 32;
  bert.num_layers = 2;
  bert.num_heads = 4;
  bert.intermediate_size = 64;
  bert.max_position_embeddings = 32;
  bert.attention_mask = true;
  check_steps_allocate_nothing("BERT", bert_classifier(bert), true);

  LlamaConfig llama;
  llama.batch = 2;
  llama.seq_len = 16;
  llama.vocab_size = 64;
  llama.hidden_size = 32;
  llama.num_layers = 2;
  llama.num_heads = 4;
  llama.num_kv_heads = 2;
  llama.intermediate_size = 64;
  check_steps_allocate_nothing("LLaMA", llama_causal_lm(llama), true);
}

// The cpu backend's Winograd convolutions (kernels/cpu/conv_winograd.cpp) take ResNet's 3x3
// stride-1 layers only from 32 channels and 8x8 planes on, which the small instance above does
// not reach: here Winograd is forced on every layer it can run, with trainable weights (their
// transform made in scratch every run) and frozen ones (made once at prepare), at 1 thread.
TEST_CASE("training steps through the cpu Winograd convolutions allocate nothing", "[train][alloc][winograd]") {
  using cpu::conv_winograd_testing::Choice;
  cpu::conv_winograd_testing::set_choice(Choice::kAlways);
  const int before = cpu::conv_winograd_testing::kernels_made();
  check_steps_allocate_nothing("ResNet-18 through Winograd", resnet18(small_resnet()), false);
  cpu::conv_winograd_testing::set_choice(Choice::kByRule);
  CHECK(cpu::conv_winograd_testing::kernels_made() > before);
}
