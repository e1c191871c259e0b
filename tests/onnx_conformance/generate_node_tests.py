#!/usr/bin/python3
"""Writes ONNX's backend node test cases (model.onnx + test_data_set_N/{input,output}_K.pb, the
layout of `python -m onnx.backend.test.cmd_tools generate-data`) under OUT/onnx-<onnx>-numpy-<numpy>/node.

Run with Debian's python3 (python3-onnx 1.12 + numpy). The folder is written once per onnx and
numpy version (numpy computes the expected outputs) and reused while its `complete` stamp exists.

onnx 1.12's case modules use aliases that numpy removed (np.float, np.int, np.object, ...); they
are put back on numpy before the modules are imported, with the builtins they always meant.
"""
import argparse
import os
import shutil
import sys

import numpy as np

REMOVED_NUMPY_ALIASES = {
    "float": float, "int": int, "bool": bool, "object": object, "complex": complex,
    "str": str, "long": int, "unicode": str,
}


def install_numpy_aliases():
    for name, value in REMOVED_NUMPY_ALIASES.items():
        if name not in np.__dict__:
            setattr(np, name, value)


def write_proto(path, proto):
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def write_value(path, value, value_info):
    from onnx import numpy_helper
    kind = value_info.type.WhichOneof("value")
    if kind == "tensor_type":
        proto = numpy_helper.from_array(np.asarray(value), value_info.name)
    elif kind == "sequence_type":
        proto = numpy_helper.from_list(value, value_info.name)
    elif kind == "map_type":
        proto = numpy_helper.from_dict(value, value_info.name)
    else:
        proto = numpy_helper.from_optional(value, value_info.name)
    write_proto(path, proto)


def write_case(case, case_dir):
    os.makedirs(case_dir)
    write_proto(os.path.join(case_dir, "model.onnx"), case.model)
    graph = case.model.graph
    for i, (inputs, outputs) in enumerate(case.data_sets):
        data_dir = os.path.join(case_dir, f"test_data_set_{i}")
        os.makedirs(data_dir)
        for k, value in enumerate(inputs):
            write_value(os.path.join(data_dir, f"input_{k}.pb"), value, graph.input[k])
        for k, value in enumerate(outputs):
            write_value(os.path.join(data_dir, f"output_{k}.pb"), value, graph.output[k])


def generate(root):
    install_numpy_aliases()
    import onnx.backend.test.case.node as node_test
    # The cases draw their inputs from numpy's global generator: seeded, every run writes the same data.
    np.random.seed(0)
    # onnx 1.12 yields 924 cases under 922 names (two names twice); generate-data writes each name
    # over the last, so the later case of a name is the one kept here too.
    cases = {case.name: case for case in node_test.collect_testcases(None)}
    node_dir = os.path.join(root, "node")
    if os.path.exists(root):
        shutil.rmtree(root)
    for case in cases.values():
        write_case(case, os.path.join(node_dir, case.name))
    with open(os.path.join(root, "complete"), "w") as f:
        f.write(f"{len(cases)}\n")
    return len(cases)


def ensure_cases(out, force=False):
    """Returns (node folder, case count, whether it was cached), writing the cases if needed."""
    import onnx
    root = os.path.join(out, f"onnx-{onnx.__version__}-numpy-{np.__version__}")
    stamp = os.path.join(root, "complete")
    if os.path.exists(stamp) and not force:
        with open(stamp) as f:
            return os.path.join(root, "node"), int(f.read()), True
    return os.path.join(root, "node"), generate(root), False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="parent folder of the versioned case folders")
    parser.add_argument("--force", action="store_true", help="write again even when the stamp exists")
    args = parser.parse_args()
    node_dir, count, cached = ensure_cases(args.out, args.force)
    print(f"{node_dir}: {count} cases" + (" (cached)" if cached else " written"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
