// The cuda shape family's logic (kernels/cuda/shape_logic.hpp) against ref, byte for byte, for
// element widths 1, 2, 4 and 8: Transpose, Slice and Expand through the one gather with their
// planned indices (16 bytes a move where they allow, tiles for transposes that move the innermost
// dim), Pad with crops and fills in every encoding, Concat and Split as per-piece scatters/gathers.
#include <numeric>

#include "cuda_logic/logic_harness.hpp"
#include "kernels/cuda/element_width.hpp"
#include "kernels/cuda/shape_logic.hpp"

using namespace pock;
using namespace pock::cuda;
using namespace pock::test;

namespace {

// Distinct bytes per element, so a wrong index shows whatever the width.
HostBuffer counting(DType dt, const Shape& shape) {
  HostBuffer b{dt, shape, {}};
  b.bytes.resize(static_cast<size_t>(numel(shape)) * dtype_size(dt));
  for (size_t i = 0; i < b.bytes.size(); ++i) b.bytes[i] = static_cast<uint8_t>(i * 7 + i / 251);
  if (dt == DType::kBool) {
    for (uint8_t& v : b.bytes) v &= 1;
  }
  return b;
}

const DType kWidths[] = {DType::kU8, DType::kBF16, DType::kF32, DType::kI64};

template <typename Plan, typename Run>
void check_bytes(BoundOp& op, Plan plan, Run run) {
  INFO(op.op() << ": " << op.status().message());
  REQUIRE(op.status().is_ok());
  const std::vector<HostBuffer> want = op.run_ref();
  std::vector<HostBuffer> got = op.fresh_outputs();
  pock_op_desc d = op.bind(got);
  params::ShapeParams p;
  REQUIRE(params::parse(d, &p).is_ok());
  run(d, plan(d, p));
  for (size_t i = 0; i < got.size(); ++i) CHECK(byte_mismatches(got[i], want[i]) == "");
}

// The gather as the kernel launches it: the move width from the plan and the pointers.
void run_gather(const pock_op_desc& d, const MovePlan& plan) {
  const MoveLaunch l = move_launch(plan, dtype_size(static_cast<DType>(d.outputs[0].dtype)), d.inputs[0].data,
                                   d.outputs[0].data, numel(d.outputs[0]));
  with_move_width(l.bytes, [&](auto t) {
    using T = decltype(t);
    each_element(GatherMap<T>{static_cast<const T*>(d.inputs[0].data), static_cast<T*>(d.outputs[0].data), *l.index},
                 l.moves);
  });
}

// `factor`: the elements the plan must move at once (checks the wide path is the one taken).
void check_gather(const std::string& name, DType dt, const Shape& shape, const Attrs& attrs, int64_t factor = 0) {
  BoundOp op(name, {counting(dt, shape)}, attrs);
  check_bytes(op, [&](const pock_op_desc& d, const params::ShapeParams& p) {
    StridedIndex<1> index;
    if (name == "Transpose") {
      index = transpose_index(d.inputs[0], d.outputs[0], p);
    } else if (name == "Slice") {
      index = slice_index(d.inputs[0], d.outputs[0], p);
    } else {
      const pock_tensor_desc* ins[1] = {&d.inputs[0]};
      index = broadcast_index<1>(d.outputs[0], ins);
    }
    const MovePlan plan = move_plan(index, dtype_size(dt));
    if (factor > 0) CHECK(plan.factor == factor);
    return plan;
  }, run_gather);
}

// The tiled transpose as the kernel runs it: per tile, a load step into a 32 x 33 tile, then a
// store step out of it, each over the block's threads (x) and rows (k).
template <typename T>
void run_tiles(const pock_op_desc& d, const TileTranspose& p) {
  const T* in = static_cast<const T*>(d.inputs[0].data);
  T* out = static_cast<T*>(d.outputs[0].data);
  for (int64_t t = 0; t < p.tiles; ++t) {
    T tile[kTile][kTile + 1];
    const TileOrigin o = p.origin(t);
    int64_t off;
    for (int k = 0; k < kTile; ++k) {
      for (int x = 0; x < kTile; ++x) {
        if (p.load_at(o, x, k, &off)) tile[k][x] = in[off];
      }
    }
    for (int k = 0; k < kTile; ++k) {
      for (int x = 0; x < kTile; ++x) {
        if (p.store_at(o, x, k, &off)) out[off] = tile[x][k];
      }
    }
  }
}

// `tiled`: whether the plan must take the tiled path.
void check_tiled_transpose(DType dt, const Shape& shape, const std::vector<int64_t>& perm, bool tiled) {
  BoundOp op("Transpose", {counting(dt, shape)}, {{"perm", perm}});
  check_bytes(op, [&](const pock_op_desc& d, const params::ShapeParams& p) {
    TileTranspose tiles;
    CHECK(tile_transpose(transpose_index(d.inputs[0], d.outputs[0], p), &tiles) == tiled);
    return tiles;
  }, [&](const pock_op_desc& d, const TileTranspose& tiles) {
    if (!tiled) return run_gather(d, move_plan(transpose_index(d.inputs[0], d.outputs[0], params::ShapeParams{perm}),
                                               dtype_size(dt)));
    with_element_width(d.outputs[0].dtype, [&](auto t) { run_tiles<decltype(t)>(d, tiles); });
  });
}

}  // namespace

TEST_CASE("cuda shape logic: Transpose of random permutations, every width", "[cuda_logic]") {
  std::mt19937 gen(11);
  for (DType dt : kWidths) {
    for (int rank = 1; rank <= 5; ++rank) {
      Shape shape;
      for (int d = 0; d < rank; ++d) shape.push_back(std::uniform_int_distribution<int64_t>(1, rank <= 3 ? 9 : 4)(gen));
      std::vector<int64_t> perm(static_cast<size_t>(rank));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), gen);
      check_gather("Transpose", dt, shape, {{"perm", perm}});
    }
    check_gather("Transpose", dt, {3, 5, 2}, {});                                 // no perm: reversed
    // Attention's head split: rows of 8 elements move 16 bytes at a time (8 bytes for i64: 2).
    check_gather("Transpose", dt, {2, 16, 3, 8}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}},
                 std::min<int64_t>(8, 16 / static_cast<int64_t>(dtype_size(dt))));
    check_gather("Transpose", dt, {2, 6, 3, 8}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, 1);  // innermost moves
  }
}

TEST_CASE("cuda shape logic: transposes that move the innermost dim go through tiles", "[cuda_logic]") {
  for (DType dt : kWidths) {
    check_tiled_transpose(dt, {37, 19}, {1, 0}, true);                  // edges short of a tile
    check_tiled_transpose(dt, {70, 33}, {1, 0}, true);                  // several tiles each way
    check_tiled_transpose(dt, {2, 16, 3, 8}, {0, 2, 3, 1}, true);       // K^T with batch dims
    check_tiled_transpose(dt, {2, 5, 7, 3}, {0, 2, 3, 1}, true);        // NCHW -> NHWC
    check_tiled_transpose(dt, {2, 7, 3, 5}, {0, 3, 1, 2}, true);        // and back
    check_tiled_transpose(dt, {3, 40, 2, 36}, {2, 3, 0, 1}, true);      // collapses to one 2-D transpose
    check_tiled_transpose(dt, {3, 4, 5, 6}, {1, 3, 0, 2}, true);        // batch dims that move too
    check_tiled_transpose(dt, {2, 16, 3, 8}, {0, 2, 1, 3}, false);      // innermost stays: gather
  }
}

TEST_CASE("cuda shape logic: Slice with axes, negative bounds and steps", "[cuda_logic]") {
  auto slice = [](std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                  std::vector<int64_t> steps) {
    Attrs a;
    a.set("starts", starts);
    a.set("ends", ends);
    if (!axes.empty()) a.set("axes", axes);
    if (!steps.empty()) a.set("steps", steps);
    return a;
  };
  for (DType dt : kWidths) {
    check_gather("Slice", dt, {6, 7}, slice({1, 2}, {5, 6}, {}, {}));
    check_gather("Slice", dt, {6, 7, 4}, slice({-3}, {100}, {1}, {}));
    check_gather("Slice", dt, {6, 7}, slice({5, 0}, {-100, 7}, {0, 1}, {-2, 3}));
    check_gather("Slice", dt, {4, 9}, slice({0}, {9}, {-1}, {2}));
    check_gather("Slice", dt, {2, 3, 8}, slice({4}, {8}, {2}, {}), dt == DType::kI64 ? 2 : 4);  // RoPE's second half
    check_gather("Slice", dt, {2, 3, 8}, slice({2}, {6}, {2}, {}), 2);  // a start on a half unit
    check_gather("Slice", dt, {3, 6}, slice({0}, {4}, {1}, {}), 2);        // rows 6 apart: pairs, not fours
  }
}

TEST_CASE("cuda shape logic: Expand over leading, inner and repeated broadcasts", "[cuda_logic]") {
  const std::pair<Shape, std::vector<int64_t>> cases[] = {
      {{2, 3, 1, 5, 4}, {2, 3, 3, 5, 4}}, {{3, 1}, {2, 3, 4}}, {{1, 5}, {4, 5}}, {{1}, {6, 7}}, {{4, 1, 3, 1}, {4, 2, 3, 5}}};
  for (DType dt : kWidths) {
    for (const auto& [in, shape] : cases) check_gather("Expand", dt, in, {{"shape", shape}});
    check_gather("Expand", dt, {2, 1, 5, 16}, {{"shape", std::vector<int64_t>{2, 4, 5, 16}}},
                 16 / static_cast<int64_t>(dtype_size(dt)));  // GQA's K/V heads
  }
}

TEST_CASE("cuda shape logic: Pad with crops and a fill in every encoding", "[cuda_logic]") {
  for (DType dt : {DType::kU8, DType::kI8, DType::kBool, DType::kF16, DType::kBF16, DType::kF32, DType::kI32, DType::kI64}) {
    for (const auto& [shape, pads] : {std::pair<Shape, std::vector<int64_t>>{{3, 4}, {1, 2, 0, 1}},
                                      {{2, 3, 5}, {0, -1, 2, 1, 1, -2}}, {{4}, {3, 0}}}) {
      BoundOp op("Pad", {counting(dt, shape)}, {{"pads", pads}, {"value", dt == DType::kU8 ? 7.0 : -1.5}});
      check_bytes(op, [](const pock_op_desc& d, const params::ShapeParams& p) { return pad_plan(d.inputs[0], d.outputs[0], p); },
                  [](const pock_op_desc& d, const PadPlan& plan) {
                    with_element_width(d.outputs[0].dtype, [&](auto t) {
                      each_element(pad_map<decltype(t)>(d.inputs[0].data, d.outputs[0].data, plan),
                                   numel(d.outputs[0]));
                    });
                  });
    }
  }
}

// Each piece moved as the kernel does: a scatter into the joined tensor or a gather from it.
void run_pieces(const pock_op_desc& d, const std::vector<MovePlan>& moves, bool into_joined) {
  const pock_tensor_desc& joined = into_joined ? d.outputs[0] : d.inputs[0];
  const size_t element = dtype_size(static_cast<DType>(joined.dtype));
  for (size_t i = 0; i < moves.size(); ++i) {
    const pock_tensor_desc& piece = into_joined ? d.inputs[i] : d.outputs[i];
    const MoveLaunch l = move_launch(moves[i], element, piece.data, joined.data, numel(piece));
    with_move_width(l.bytes, [&](auto t) {
      using T = decltype(t);
      auto* whole = static_cast<T*>(joined.data);
      auto* part = static_cast<T*>(piece.data);
      if (into_joined) {
        each_element(ScatterMap<T>{part, whole, *l.index}, l.moves);
      } else {
        each_element(GatherMap<T>{whole, part, *l.index}, l.moves);
      }
    });
  }
}

TEST_CASE("cuda shape logic: Concat and Split on every axis, pieces moved as wide as they allow", "[cuda_logic]") {
  for (DType dt : kWidths) {
    for (int64_t axis : {0, 1, -1}) {
      Shape a{2, 3, 8}, b{2, 3, 8};
      b[static_cast<size_t>(axis < 0 ? 2 : axis)] = axis < 0 ? 4 : 2;
      BoundOp concat("Concat", {counting(dt, a), counting(dt, b)}, {{"axis", axis}});
      check_bytes(concat, [](const pock_op_desc& d, const params::ShapeParams& p) {
        return piece_moves(d.outputs[0], d.inputs, d.num_inputs, p.axis);
      }, [](const pock_op_desc& d, const std::vector<MovePlan>& moves) { run_pieces(d, moves, true); });
      // An empty piece on the middle axis; odd widths on the last.
      const std::vector<int64_t> sizes = axis == 0 ? std::vector<int64_t>{1, 1}
                                                   : (axis == 1 ? std::vector<int64_t>{1, 0, 5} : std::vector<int64_t>{3, 1});
      BoundOp split("Split", {counting(dt, {2, 6, 4})}, {{"axis", axis}, {"split", sizes}});
      check_bytes(split, [](const pock_op_desc& d, const params::ShapeParams& p) {
        return piece_moves(d.inputs[0], d.outputs, d.num_outputs, p.axis);
      }, [](const pock_op_desc& d, const std::vector<MovePlan>& moves) { run_pieces(d, moves, false); });
    }
  }
  // A [T, 3 * C] QKV split into three [T, C] pieces: 16 bytes a move for f32.
  BoundOp qkv("Split", {counting(DType::kF32, {5, 24})}, {{"axis", int64_t{1}}, {"split", std::vector<int64_t>{8, 8, 8}}});
  check_bytes(qkv, [](const pock_op_desc& d, const params::ShapeParams& p) {
    const std::vector<MovePlan> moves = piece_moves(d.inputs[0], d.outputs, d.num_outputs, p.axis);
    for (const MovePlan& m : moves) CHECK(m.factor == 4);
    return moves;
  }, [](const pock_op_desc& d, const std::vector<MovePlan>& moves) { run_pieces(d, moves, false); });
}
