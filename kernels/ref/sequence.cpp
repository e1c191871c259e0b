// Reference kernels of the sequence family.
// Attributes were validated by the schema when the graph was built and again when the blob loaded;
// what only the data can break (a Gather index out of range) is checked here.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels/params/sequence.hpp"
#include "ir/splitmix64.hpp"
#include "kernels/ref/ref_util.hpp"

namespace pock {
namespace {

int64_t index_at(const pock_tensor_desc& indices, int64_t i) {
  return indices.dtype == POCK_I32 ? static_cast<const int32_t*>(indices.data)[i]
                                   : static_cast<const int64_t*>(indices.data)[i];
}

// data [outer, dim, inner] viewed around the axis; each index selects one [inner] block.
// Every index is checked before anything is written, so a bad index leaves the output untouched.
Status gather(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& data = c.in(0);
  const pock_tensor_desc& indices = c.in(1);
  const int64_t attr_axis = p.axis;
  const int axis = static_cast<int>(attr_axis < 0 ? attr_axis + data.rank : attr_axis);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= data.dims[d];
  for (int d = axis + 1; d < data.rank; ++d) inner *= data.dims[d];
  const int64_t dim = data.dims[axis];
  const int64_t count = numel(indices);
  for (int64_t j = 0; j < count; ++j) {
    const int64_t k = index_at(indices, j);
    if (k < -dim || k >= dim) {
      return c.error("index " + std::to_string(k) + " at position " + std::to_string(j) + " is out of range [" +
                     std::to_string(-dim) + ", " + std::to_string(dim) + ") for axis " + std::to_string(axis));
    }
  }
  const size_t block = static_cast<size_t>(inner) * dtype_size(static_cast<DType>(data.dtype));
  const auto* src = static_cast<const uint8_t*>(data.data);
  auto* dst = static_cast<uint8_t*>(c.out(0).data);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      int64_t k = index_at(indices, j);
      if (k < 0) k += dim;
      std::memcpy(dst + (o * count + j) * block, src + (o * dim + k) * block, block);
    }
  }
  return Status::ok();
}

// Rotates D/2 pairs of each row of x [..., S, D] by angle = s * theta^(-2i/D) at position s.
// Pairs are (i, i + D/2) in the rotate-half form and (2i, 2i + 1) in the interleaved form.
Status rope(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t seq = x.dims[x.rank - 2];
  const int64_t dim = x.dims[x.rank - 1];
  const int64_t half = dim / 2;
  const double theta = p.theta;
  const bool interleaved = p.interleaved;
  const double direction = p.inverse ? -1.0 : 1.0;
  const int64_t rows = seq * dim > 0 ? numel(x) / (seq * dim) : 0;
  const int64_t first = c.has_input(1) ? *c.in_data<int64_t>(1) : 0;
  const float* in = c.in_data<float>(0);
  float* out = c.out_data<float>(0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t row = (r * seq + s) * dim;
      for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(first + s) * std::pow(theta, -2.0 * static_cast<double>(i) / dim);
        const double cos_a = std::cos(angle), sin_a = direction * std::sin(angle);
        const int64_t a = row + (interleaved ? 2 * i : i);
        const int64_t b = row + (interleaved ? 2 * i + 1 : i + half);
        const double xa = in[a], xb = in[b];  // read both first: x and y may share a buffer
        out[a] = static_cast<float>(xa * cos_a - xb * sin_a);
        out[b] = static_cast<float>(xb * cos_a + xa * sin_a);
      }
    }
  }
  return Status::ok();
}

// q [B, H, S, D]; k, v [B, KV, S, D] go into the caches [B, KV, T, D] at rows p..p+S-1; query s
// of head h attends to cache rows 0..p+s of KV head h / (H / KV).
Status cached_attention(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& q = c.in(0);
  const pock_tensor_desc& kc = c.in(3);
  const int64_t batch = q.dims[0], heads = q.dims[1], seq = q.dims[2], dim = q.dims[3];
  const int64_t kv_heads = kc.dims[1], capacity = kc.dims[2], group = heads / kv_heads;
  const int64_t position = *c.in_data<int64_t>(5);
  if (position < 0 || position > capacity - seq) {
    return Status(Code::kInvalidArgument, "position " + std::to_string(position) + " + " + std::to_string(seq) +
                                              " new rows do not fit the KV cache of " + std::to_string(capacity));
  }
  float* key_cache = static_cast<float*>(c.in(3).data);
  float* value_cache = static_cast<float*>(c.in(4).data);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < kv_heads; ++h) {
      const size_t from = static_cast<size_t>(((b * kv_heads + h) * seq) * dim);
      const size_t to = static_cast<size_t>(((b * kv_heads + h) * capacity + position) * dim);
      std::memcpy(key_cache + to, c.in_data<float>(1) + from, static_cast<size_t>(seq * dim) * sizeof(float));
      std::memcpy(value_cache + to, c.in_data<float>(2) + from, static_cast<size_t>(seq * dim) * sizeof(float));
    }
  }
  const float* queries = c.in_data<float>(0);
  float* out = c.out_data<float>(0);
  // Two passes over the visible rows (the maximum score, then the weights), so that the kernel
  // needs no buffer of scores.
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const float* keys = key_cache + ((b * kv_heads + h / group) * capacity) * dim;
      const float* values = value_cache + ((b * kv_heads + h / group) * capacity) * dim;
      for (int64_t s = 0; s < seq; ++s) {
        const float* qs = queries + ((b * heads + h) * seq + s) * dim;
        auto score = [&](int64_t j) {
          double dot = 0.0;
          for (int64_t e = 0; e < dim; ++e) dot += double(qs[e]) * double(keys[j * dim + e]);
          return dot * p.scale;
        };
        const int64_t visible = position + s + 1;
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < visible; ++j) top = std::max(top, score(j));
        float* os = out + ((b * heads + h) * seq + s) * dim;
        std::fill(os, os + dim, 0.0f);
        double total = 0.0;
        for (int64_t j = 0; j < visible; ++j) {
          const double w = std::exp(score(j) - top);
          total += w;
          for (int64_t e = 0; e < dim; ++e) os[e] += static_cast<float>(w * double(values[j * dim + e]));
        }
        for (int64_t e = 0; e < dim; ++e) os[e] = static_cast<float>(os[e] / total);
      }
    }
  }
  return Status::ok();
}

// scores [..., S, T]: query i sees keys j <= i + (T - S), the keys before it in a cache included.
Status causal_mask(const KernelCall& c, const params::SequenceParams& p) {
  const pock_tensor_desc& x = c.in(0);
  const int64_t queries = x.dims[x.rank - 2];
  const int64_t keys = x.dims[x.rank - 1];
  const float value = static_cast<float>(p.value);
  const float* in = c.in_data<float>(0);
  float* out = c.out_data<float>(0);
  const int64_t total = numel(x);
  for (int64_t e = 0; e < total; ++e) {
    const int64_t j = e % keys;
    const int64_t i = (e / keys) % queries;
    out[e] = j > i + (keys - queries) ? value : in[e];
  }
  return Status::ok();
}

Status dropout(const KernelCall& c) {
  if (c.out(0).data != c.in(0).data) std::memmove(c.out(0).data, c.in(0).data, c.out(0).nbytes);
  return Status::ok();
}


// The dropout mask is a pure function of (seed, step, element index) so that the forward pass,
// its recomputation and every backend agree without carrying RNG state. The contract, which every
// backend reproduces bit for bit:
//   bits = splitmix64(splitmix64(splitmix64(seed) ^ step) ^ index)
//   keep = (bits >> 40) >= uint32(ratio * 2^24)        (24 uniform bits against an integer threshold)
// and mask = keep ? 1 : 0, y = x * mask / (1 - ratio).
Status dropout_train(const KernelCall& c, const params::SequenceParams& p) {
  const double ratio = p.ratio;
  const uint64_t seed = p.seed;
  const uint64_t step = static_cast<uint64_t>(*c.in_data<int64_t>(1));
  const uint64_t threshold = static_cast<uint64_t>(ratio * 16777216.0);
  const double scale = 1.0 / (1.0 - ratio);
  const uint64_t stream = splitmix64(splitmix64(seed) ^ step);
  const float* x = c.in_data<float>(0);
  float* y = c.out_data<float>(0);
  uint8_t* mask = c.out_data<uint8_t>(1);
  for (int64_t i = 0, n = numel(c.in(0)); i < n; ++i) {
    const bool keep = (splitmix64(stream ^ static_cast<uint64_t>(i)) >> 40) >= threshold;
    mask[i] = keep ? 1 : 0;
    y[i] = static_cast<float>(x[i] * (keep ? scale : 0.0));  // x * mask * scale: a NaN stays NaN
  }
  return Status::ok();
}

}  // namespace

void register_ref_sequence(KernelTable& t) {
  for (int i = 0; i < kNumDTypes; ++i) t.add(typed_kernel<params::SequenceParams, gather>("Gather", static_cast<DType>(i)));
  t.add(typed_kernel<params::SequenceParams, rope>("Rope", DType::kF32));
  t.add(typed_kernel<params::SequenceParams, causal_mask>("CausalMask", DType::kF32));
  t.add(typed_kernel<params::SequenceParams, cached_attention>("CachedAttention", DType::kF32));
  t.add({"Dropout", DType::kF32, dropout});
  t.add(typed_kernel<params::SequenceParams, dropout_train>("DropoutTrain", DType::kF32));
}

}  // namespace pock
