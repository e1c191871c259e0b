// Import-time evaluation of ONNX's signal tables: the Hann, Hamming and Blackman windows and
// MelWeightMatrix. Their sizes fix the output shapes, so pock builds them as constants whenever
// their inputs are known at compile time (initializers, Constant nodes, or graph inputs bound at
// compile time); a size computed at run time is refused by the importer, naming the input.
#include <cmath>
#include <string>

#include "frontend/onnx/folding_util.hpp"

namespace pock::onnx_import::fold {
namespace {

using Inputs = std::vector<const HostTensor*>;
using Outputs = std::vector<HostTensor>;

Result<int64_t> scalar_int(NodeView& node, const Inputs& in, int i, const char* what) {
  if (!in[static_cast<size_t>(i)] || in[static_cast<size_t>(i)]->size() != 1) {
    return node.input_error(i, std::string("(") + what + ") must be one value");
  }
  if (in[static_cast<size_t>(i)]->is_float()) return node.input_error(i, std::string("(") + what + ") must be an integer");
  return in[static_cast<size_t>(i)]->i[0];
}

// The output in the dtype of attribute output_datatype (default float); integer dtypes truncate,
// as a Cast would.
Status emit_table(NodeView& node, const Shape& shape, const std::vector<double>& values, Outputs* out, bool* folded) {
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  POCK_ASSIGN_OR_RETURN(int64_t elem, node.attrs().get_int("output_datatype", 1));
  POCK_ASSIGN_OR_RETURN(DType dtype, onnx_dtype(node, elem));
  HostTensor y = HostTensor::zeros(dtype, shape);
  for (size_t k = 0; k < values.size(); ++k) {
    if (y.is_float()) y.f[k] = values[k];
    else y.i[k] = static_cast<int64_t>(values[k]);
  }
  out->push_back(std::move(y));
  *folded = true;
  return Status::ok();
}

// Generalized cosine windows: w[n] = a0 - a1 cos(2 pi n / L) + a2 cos(4 pi n / L), L = size
// (periodic, the default) or size - 1 (symmetric).
Status fold_window(NodeView& node, const Inputs& in, Outputs* out, bool* folded, double a0, double a1, double a2) {
  POCK_ASSIGN_OR_RETURN(int64_t size, scalar_int(node, in, 0, "size"));
  if (size < 1) return node.input_error(0, "(size) must be at least 1, got " + std::to_string(size));
  POCK_ASSIGN_OR_RETURN(int64_t periodic, node.attrs().get_int("periodic", 1));
  POCK_RETURN_IF_ERROR(check_folded_size(node, Shape{size}));
  const double length = static_cast<double>(periodic ? size : size - 1);
  const double two_pi = 2.0 * std::acos(-1.0);
  std::vector<double> w(static_cast<size_t>(size), 1.0);  // a symmetric window of one sample is [1]
  for (int64_t n = 0; n < size && length > 0; ++n) {
    const double th = two_pi * static_cast<double>(n) / length;
    w[static_cast<size_t>(n)] = a0 - a1 * std::cos(th) + a2 * std::cos(2 * th);
  }
  return emit_table(node, Shape{size}, w, out, folded);
}

Status fold_hann(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  return fold_window(node, in, out, folded, 0.5, 0.5, 0.0);
}

Status fold_hamming(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  return fold_window(node, in, out, folded, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}

Status fold_blackman(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  return fold_window(node, in, out, folded, 0.42, 0.5, 0.08);
}

double hertz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
double mel_to_hertz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

// [dft_length / 2 + 1, num_mel_bins] triangular filters, as ONNX's definition computes them: the
// mel range split into num_mel_bins + 2 steps, each edge mapped to a spectrogram bin
// floor((dft_length + 1) * hz / sample_rate); filter i rises from edge i to edge i + 1 and falls to
// edge i + 2.
Status fold_mel_weight_matrix(NodeView& node, const Inputs& in, Outputs* out, bool* folded) {
  POCK_ASSIGN_OR_RETURN(int64_t mel_bins, scalar_int(node, in, 0, "num_mel_bins"));
  POCK_ASSIGN_OR_RETURN(int64_t dft_length, scalar_int(node, in, 1, "dft_length"));
  POCK_ASSIGN_OR_RETURN(int64_t sample_rate, scalar_int(node, in, 2, "sample_rate"));
  for (int i = 3; i < 5; ++i) {
    if (!in[static_cast<size_t>(i)] || in[static_cast<size_t>(i)]->size() != 1) {
      return node.input_error(i, i == 3 ? "(lower_edge_hertz) must be one value" : "(upper_edge_hertz) must be one value");
    }
  }
  const double lower = in[3]->as_double(0), upper = in[4]->as_double(0);
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1) {
    return node.error("num_mel_bins, dft_length and sample_rate must be positive");
  }
  if (!(lower >= 0 && lower < upper)) return node.error("the edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz");
  const int64_t spectrum_bins = dft_length / 2 + 1;
  const Shape shape{spectrum_bins, mel_bins};
  POCK_RETURN_IF_ERROR(check_folded_size(node, shape));
  const double low_mel = hertz_to_mel(lower);
  const double step = (hertz_to_mel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t k = 0; k < mel_bins + 2; ++k) {
    const double hz = mel_to_hertz(static_cast<double>(k) * step + low_mel);
    edge[static_cast<size_t>(k)] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    if (edge[static_cast<size_t>(k)] >= spectrum_bins) {
      return node.error("upper_edge_hertz " + std::to_string(upper) + " lies past the Nyquist frequency of sample_rate " +
                        std::to_string(sample_rate));
    }
  }
  std::vector<double> w(static_cast<size_t>(spectrum_bins * mel_bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return w[static_cast<size_t>(j * mel_bins + i)]; };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = edge[static_cast<size_t>(i)], centre = edge[static_cast<size_t>(i + 1)], right = edge[static_cast<size_t>(i + 2)];
    if (centre == left) {
      at(centre, i) = 1.0;
    } else {
      for (int64_t j = left; j <= centre; ++j) at(j, i) = static_cast<double>(j - left) / static_cast<double>(centre - left);
    }
    for (int64_t j = centre; j < right; ++j) at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - centre);
  }
  return emit_table(node, shape, w, out, folded);
}

}  // namespace

void register_signal_folders(std::unordered_map<std::string, Folder>& t) {
  t["HannWindow"] = fold_hann;
  t["HammingWindow"] = fold_hamming;
  t["BlackmanWindow"] = fold_blackman;
  t["MelWeightMatrix"] = fold_mel_weight_matrix;
}

}  // namespace pock::onnx_import::fold
