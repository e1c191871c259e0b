// ONNX DepthToSpace / SpaceToDepth as Reshape -> Transpose -> Reshape (the decomposition ONNX's own
// operator documents), so both run on every backend and train through the gradients of those three
// ops. DepthToSpace splits C into (b, b, C/b²) (DCR, the default) or (C/b², b, b) (CRD) and moves
// the two b axes after H and W; SpaceToDepth is DCR's inverse.
#include <string>

#include "frontend/onnx/import_context.hpp"

namespace pock::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

struct Geometry {
  int64_t n, c, h, w, b;
};

Result<Geometry> read_geometry(NodeView& node) {
  const Shape& x = node.value(0).shape;
  if (x.size() != 4) return node.input_error(0, "must be 4-D [N, C, H, W], got " + shape_str(x));
  POCK_ASSIGN_OR_RETURN(int64_t b, node.attrs().get_int("blocksize", 0));
  if (b < 1) return node.error("blocksize must be at least 1, got " + std::to_string(b));
  return Geometry{x[0], x[1], x[2], x[3], b};
}

Status reshape_transpose_reshape(NodeView& node, const Ints& split, const Ints& perm, const Ints& merged) {
  POCK_ASSIGN_OR_RETURN(TensorId x, node.input(0));
  POCK_ASSIGN_OR_RETURN(auto s, node.emit("Reshape", {x}, Attrs{{"shape", split}}, "blocks"));
  POCK_ASSIGN_OR_RETURN(auto t, node.emit("Transpose", {s[0]}, Attrs{{"perm", perm}}, "moved_blocks"));
  return node.emit_final("Reshape", {t[0]}, Attrs{{"shape", merged}});
}

Status convert_depth_to_space(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Geometry g, read_geometry(node));
  if (g.c % (g.b * g.b) != 0) {
    return node.input_error(0, "channels " + std::to_string(g.c) + " are not a multiple of blocksize² " +
                                   std::to_string(g.b * g.b));
  }
  POCK_ASSIGN_OR_RETURN(std::string mode, node.attrs().get_string("mode", "DCR"));
  const int64_t c = g.c / (g.b * g.b);
  const Ints merged = {g.n, c, g.h * g.b, g.w * g.b};
  if (mode == "DCR") return reshape_transpose_reshape(node, {g.n, g.b, g.b, c, g.h, g.w}, {0, 3, 4, 1, 5, 2}, merged);
  if (mode == "CRD") return reshape_transpose_reshape(node, {g.n, c, g.b, g.b, g.h, g.w}, {0, 1, 4, 2, 5, 3}, merged);
  return node.error("mode must be DCR or CRD, got '" + mode + "'");
}

Status convert_space_to_depth(NodeView& node) {
  POCK_ASSIGN_OR_RETURN(Geometry g, read_geometry(node));
  if (g.h % g.b != 0 || g.w % g.b != 0) {
    return node.input_error(0, "H and W must be multiples of blocksize " + std::to_string(g.b) + ", got " +
                                   shape_str(node.value(0).shape));
  }
  const int64_t h = g.h / g.b, w = g.w / g.b;
  return reshape_transpose_reshape(node, {g.n, g.c, h, g.b, w, g.b}, {0, 3, 5, 1, 2, 4}, {g.n, g.c * g.b * g.b, h, w});
}

}  // namespace

void register_depth_space_converters(std::unordered_map<std::string, Converter>& t) {
  t["DepthToSpace"] = convert_depth_to_space;
  t["SpaceToDepth"] = convert_space_to_depth;
}

}  // namespace pock::onnx_import
