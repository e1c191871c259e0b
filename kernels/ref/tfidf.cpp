// Reference kernel of the tfidf family: TfIdfVectorizer, row by row. For each n-gram length and
// each skip, every start position gives one n-gram; 1-grams are taken once (skips do not change
// them), as ONNX's reference does.
#include <vector>

#include "kernels/params/tfidf.hpp"
#include "kernels/ref/ref_util.hpp"
#include "runtime/prepared_kernel.hpp"

namespace pock {
namespace {

using params::TfIdfMode;

// The parameters, one row's n-gram counts and the n-gram being looked up, sized at prepare: a
// step allocates nothing.
struct TfIdfState {
  params::TfIdfParams p;
  std::vector<int64_t> found, gram;
  Status prepare(const pock_op_desc& op) {
    POCK_RETURN_IF_ERROR(params::parse(op, &p));
    found.resize(p.coordinate.size());
    gram.reserve(static_cast<size_t>(p.max_gram));
    return Status::ok();
  }
};

template <typename Token>
Status tfidf_vectorizer(const KernelCall& c, TfIdfState& state) {
  const params::TfIdfParams& p = state.p;
  const pock_tensor_desc& x = c.in(0);
  const int64_t cols = x.dims[x.rank - 1], rows = x.rank == 2 ? x.dims[0] : 1;
  const Token* tokens = c.in_data<Token>(0);
  float* y = c.out_data<float>(0);
  std::vector<int64_t>& found = state.found;
  std::vector<int64_t>& gram = state.gram;
  for (int64_t row = 0; row < rows; ++row) {
    const Token* t = tokens + row * cols;
    std::fill(found.begin(), found.end(), 0);
    for (int64_t n = p.min_gram; n <= p.max_gram; ++n) {
      const int64_t skips = n == 1 ? 0 : p.max_skip;
      for (int64_t skip = 0; skip <= skips; ++skip) {
        const int64_t step = skip + 1;
        for (int64_t start = 0; start + (n - 1) * step < cols; ++start) {
          gram.clear();
          for (int64_t k = 0; k < n; ++k) gram.push_back(static_cast<int64_t>(t[start + k * step]));
          auto at = p.position.find(gram);
          if (at != p.position.end()) ++found[static_cast<size_t>(at->second)];
        }
      }
    }
    float* out = y + row * p.width;
    std::fill(out, out + p.width, 0.0f);
    for (size_t i = 0; i < found.size(); ++i) {
      const float count = static_cast<float>(found[i]);
      float v = count;
      if (p.mode == TfIdfMode::kIdf) v = found[i] > 0 ? p.weight[i] : 0.0f;
      else if (p.mode == TfIdfMode::kTfIdf) v = count * p.weight[i];
      out[p.coordinate[i]] = v;
    }
  }
  return Status::ok();
}

}  // namespace

void register_ref_tfidf(KernelTable& t) {
  t.add(prepared_kernel<TfIdfState, tfidf_vectorizer<int32_t>>("TfIdfVectorizer", DType::kI32));
  t.add(prepared_kernel<TfIdfState, tfidf_vectorizer<int64_t>>("TfIdfVectorizer", DType::kI64));
}

}  // namespace pock
