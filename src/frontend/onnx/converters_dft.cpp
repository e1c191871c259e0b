// ONNX DFT and STFT (dft_length and, from opset 20, DFT's axis optional constant inputs) as a product with
// a constant DFT matrix: pock has no FFT op, and a matrix product is a transform MatMul already
// differentiates (its adjoint is the transposed matrix). O(n^2) per signal, which suits the frame
// and window lengths of audio front ends. The signal's axis and the real/complex axis ([..., 1] or
// [..., 2]) are moved last, flattened, multiplied by the [n * c, 2 * m] matrix (docs/ops.md), and
// the m frequency bins are put back on the axis.
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// Row (t, part) of the matrix maps input sample t (its real part, or its imaginary part when the
// input is complex) onto the real and imaginary parts of each output bin k:
//   (a + ib) * (cos th + i s sin th),  th = 2 pi k t / length,  s = -1 (forward) or +1 (inverse),
// the inverse also divided by length. Samples at t >= length are dropped (dft_length truncates);
// missing ones are zeros (it pads).
std::vector<float> dft_matrix(int64_t n, int64_t c, int64_t length, int64_t bins, bool inverse) {
  std::vector<float> w(static_cast<size_t>(n * c * 2 * bins), 0.0f);
  const double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  const double two_pi = 2.0 * std::acos(-1.0);
  for (int64_t t = 0; t < std::min(n, length); ++t) {
    for (int64_t k = 0; k < bins; ++k) {
      // (k * t) mod length keeps the angle small, so cos and sin stay exact to double rounding.
      const double th = two_pi * static_cast<double>((k * t) % length) / static_cast<double>(length);
      const double re = std::cos(th) * scale, im = sign * std::sin(th) * scale;
      float* real_row = &w[static_cast<size_t>((t * c) * 2 * bins + 2 * k)];
      real_row[0] = static_cast<float>(re);
      real_row[1] = static_cast<float>(im);
      if (c == 2) {
        float* imag_row = &w[static_cast<size_t>((t * c + 1) * 2 * bins + 2 * k)];
        imag_row[0] = static_cast<float>(-im);
        imag_row[1] = static_cast<float>(re);
      }
    }
  }
  return w;
}

struct DftSpec {
  int64_t axis;    // of the signal axis, in [1, rank - 2]
  int64_t length;  // dft_length (the signal's size when not given)
  bool inverse;
  bool onesided;
};

// Emits the DFT of x (shape `shape`, last axis 1 or 2) along spec.axis; returns [..., bins, ..., 2].
Result<TensorId> emit_dft(NodeView& node, TensorId x, const Shape& shape, const DftSpec& spec) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t n = shape[static_cast<size_t>(spec.axis)], c = shape.back();
  const int64_t bins = spec.onesided ? spec.length / 2 + 1 : spec.length;
  Ints perm, moved;  // the other axes in order, then the signal axis and the complex axis
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d != spec.axis) perm.push_back(d);
  }
  perm.insert(perm.end(), {spec.axis, rank - 1});
  int64_t rows = 1;
  for (int64_t d : perm) moved.push_back(shape[static_cast<size_t>(d)]);
  for (size_t d = 0; d + 2 < moved.size(); ++d) rows *= moved[d];
  const bool transposed = spec.axis != rank - 2;
  TensorId v = x;
  if (transposed) {
    POCK_ASSIGN_OR_RETURN(auto t, node.emit("Transpose", {v}, Attrs{{"perm", perm}}, "signal_last"));
    v = t[0];
  }
  POCK_ASSIGN_OR_RETURN(auto flat, node.emit("Reshape", {v}, Attrs{{"shape", Ints{rows, n * c}}}, "signal_rows"));
  const std::vector<float> w = dft_matrix(n, c, spec.length, bins, spec.inverse);
  std::vector<uint8_t> bytes(w.size() * sizeof(float));
  std::memcpy(bytes.data(), w.data(), bytes.size());
  const TensorId matrix = node.ctx().graph.add_constant(node.proto().output(0) + "/dft_matrix", DType::kF32,
                                                        Shape{n * c, 2 * bins}, std::move(bytes));
  POCK_ASSIGN_OR_RETURN(auto spectrum, node.emit("MatMul", {flat[0], matrix}, {}, "spectrum"));
  Ints out_moved(moved.begin(), moved.end() - 2);
  out_moved.insert(out_moved.end(), {bins, 2});
  POCK_ASSIGN_OR_RETURN(auto shaped, node.emit("Reshape", {spectrum[0]}, Attrs{{"shape", out_moved}}, "bins"));
  if (!transposed) return shaped[0];
  Ints back(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) back[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  POCK_ASSIGN_OR_RETURN(auto restored, node.emit("Transpose", {shaped[0]}, Attrs{{"perm", back}}, "bins_in_place"));
  return restored[0];
}

Status convert_dft(NodeView& node) {
  const Shape& x = node.value(0).shape;
  if (node.value(0).dtype != DType::kF32) return node.input_error(0, "must be f32");
  if (x.size() < 3 || (x.back() != 1 && x.back() != 2)) {
    return node.input_error(0, "must be [batch, signal..., 1 or 2] (real or complex), got " + shape_str(x));
  }
  // The axis is input 2 (opset 20; the adapter moves opset 17's attribute there), default -2.
  int64_t axis = -2;
  if (node.has_input(2)) {
    POCK_ASSIGN_OR_RETURN(Ints given, node.const_ints(2, "axis"));
    if (given.size() != 1) return node.input_error(2, "(axis) must be one value");
    axis = given[0];
  }
  const int64_t rank = static_cast<int64_t>(x.size());
  if (axis < 0) axis += rank;  // negative axes count the complex axis, as ONNX's reference does
  if (axis < 1 || axis > rank - 2) {
    return node.error("axis must name a signal axis (1 to " + std::to_string(rank - 2) + ") of " + shape_str(x));
  }
  DftSpec spec{axis, x[static_cast<size_t>(axis)], false, false};
  if (node.has_input(1)) {
    POCK_ASSIGN_OR_RETURN(Ints length, node.const_ints(1, "dft_length"));
    if (length.size() != 1 || length[0] < 1) return node.input_error(1, "(dft_length) must be one positive value");
    spec.length = length[0];
  }
  POCK_ASSIGN_OR_RETURN(int64_t inverse, node.attrs().get_int("inverse", 0));
  POCK_ASSIGN_OR_RETURN(int64_t onesided, node.attrs().get_int("onesided", 0));
  spec.inverse = inverse != 0;
  spec.onesided = onesided != 0;
  if (spec.onesided && (spec.inverse || x.back() == 2)) {
    return node.unsupported("a onesided DFT of a complex input or an inverse one (only a real signal's forward transform has "
                            "the conjugate symmetry onesided relies on)");
  }
  POCK_ASSIGN_OR_RETURN(TensorId xt, node.input(0));
  POCK_ASSIGN_OR_RETURN(TensorId y, emit_dft(node, xt, x, spec));
  return node.bind_output(0, y);
}

Result<int64_t> const_scalar(NodeView& node, int i, const char* what) {
  POCK_ASSIGN_OR_RETURN(Ints v, node.const_ints(i, what));
  if (v.size() != 1 || v[0] < 1) return node.input_error(i, std::string("(") + what + ") must be one positive value");
  return v[0];
}

// STFT (opset 17): frames of frame_length samples every frame_step samples, gathered with constant
// indices into [batch, frames, frame_length, c], multiplied by the window (which may be a run-time
// tensor), and each frame transformed by emit_dft. frame_step and frame_length fix the output
// shape, so they must be constants.
Status convert_stft(NodeView& node) {
  const Shape& x = node.value(0).shape;
  if (node.value(0).dtype != DType::kF32) return node.input_error(0, "must be f32");
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2)) {
    return node.input_error(0, "(signal) must be [batch, length, 1 or 2] (real or complex), got " + shape_str(x));
  }
  POCK_ASSIGN_OR_RETURN(int64_t step, const_scalar(node, 1, "frame_step"));
  int64_t frame = 0;
  if (node.has_input(3)) {
    POCK_ASSIGN_OR_RETURN(frame, const_scalar(node, 3, "frame_length"));
  } else if (node.has_input(2)) {
    frame = node.value(2).shape.size() == 1 ? node.value(2).shape[0] : 0;
  } else {
    return node.error("needs a window or a frame_length to know the frame length");
  }
  if (node.has_input(2) && node.value(2).shape != Shape{frame}) {
    return node.input_error(2, "(window) must be [frame_length] = [" + std::to_string(frame) + "], got " +
                                   shape_str(node.value(2).shape));
  }
  if (frame > x[1]) return node.error("frame_length " + std::to_string(frame) + " exceeds the signal's " + std::to_string(x[1]) + " samples");
  POCK_ASSIGN_OR_RETURN(int64_t onesided, node.attrs().get_int("onesided", 1));
  if (onesided != 0 && x[2] == 2) return node.unsupported("a onesided STFT of a complex signal (it has no conjugate symmetry)");
  const int64_t frames = 1 + (x[1] - frame) / step;
  std::vector<int64_t> index(static_cast<size_t>(frames * frame));
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t t = 0; t < frame; ++t) index[static_cast<size_t>(f * frame + t)] = f * step + t;
  }
  std::vector<uint8_t> bytes(index.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), index.data(), bytes.size());
  const TensorId indices = node.ctx().graph.add_constant(node.proto().output(0) + "/frame_indices", DType::kI64,
                                                         Shape{frames, frame}, std::move(bytes));
  POCK_ASSIGN_OR_RETURN(TensorId signal, node.input(0));
  POCK_ASSIGN_OR_RETURN(auto framed, node.emit("Gather", {signal, indices}, Attrs{{"axis", int64_t{1}}}, "frames"));
  TensorId windowed = framed[0];
  if (node.has_input(2)) {
    POCK_ASSIGN_OR_RETURN(TensorId window, node.input(2));
    POCK_ASSIGN_OR_RETURN(auto column, node.emit("Reshape", {window}, Attrs{{"shape", Ints{frame, 1}}}, "window_column"));
    POCK_ASSIGN_OR_RETURN(auto w, node.emit("Mul", {framed[0], column[0]}, {}, "windowed"));
    windowed = w[0];
  }
  const DftSpec spec{2, frame, false, onesided != 0};
  POCK_ASSIGN_OR_RETURN(TensorId y, emit_dft(node, windowed, Shape{x[0], frames, frame, x[2]}, spec));
  return node.bind_output(0, y);
}

}  // namespace

void register_dft_converters(std::unordered_map<std::string, Converter>& t) {
  t["DFT"] = convert_dft;
  t["STFT"] = convert_stft;
}

}  // namespace pock::onnx_import
