#!/usr/bin/python3
"""Lays out the test cases that onnx ships as stored files (onnx/backend/test/data: the
PyTorch-exported layer tests and a few small models) for run_onnx_node_test, under
OUT/onnx-<onnx>-stored/<suite>/<case>, the layout of the node cases.

The files come from onnx's pip wheel (Debian's python3-onnx leaves them out): SOURCE is the wheel,
a folder holding it (scripts/fetch-onnx-test-data.sh downloads it there), an installed onnx
package folder, or a python whose onnx has them. The `real` suite is left out: its models are
downloaded from the network. `light` models (the model zoo's networks with every weight a
ConstantOfShape) store only the model and the expected output: their input is the one onnx's
backend runner makes up (`generate_dummy_data(random=False)`), written here next to them.

Needs onnx (any version: Debian's 1.12 reads the stored models) and numpy.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper

SUITES = ("pytorch-converted", "pytorch-operator", "simple", "light")
DATA_IN_PACKAGE = os.path.join("backend", "test", "data")
WHEEL_DATA_PREFIX = "onnx/backend/test/data/"
WHEEL_NAME = re.compile(r"^onnx-(\d+(?:\.\d+)*)-.*\.whl$")


class NoStoredData(Exception):
    """SOURCE holds no stored cases; the message says why (the test is then skipped)."""


def version_key(version):
    return tuple(int(p) for p in version.split("."))


def newest_wheel(folder):
    wheels = [(version_key(m.group(1)), os.path.join(folder, f))
              for f in os.listdir(folder) if (m := WHEEL_NAME.match(f))]
    return max(wheels)[1] if wheels else None


def package_of_python(python):
    """The onnx package folder and version of `python`, or (None, why)."""
    probe = "import onnx, os; print(os.path.dirname(onnx.__file__)); print(onnx.__version__)"
    try:
        p = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60)
    except OSError as e:
        return None, f"cannot run {python}: {e}"
    if p.returncode != 0:
        return None, f"{python} cannot import onnx"
    folder, version = p.stdout.split()
    return (folder, version), None


def locate(source):
    """("wheel", path, version) or ("folder", data folder, version) for SOURCE; raises NoStoredData."""
    if not source or not os.path.exists(source):
        raise NoStoredData(f"no onnx test data at '{source}' (scripts/fetch-onnx-test-data.sh downloads onnx's wheel, "
                           "which holds it)")
    if os.path.isdir(source) and not os.path.isdir(os.path.join(source, DATA_IN_PACKAGE)) and \
            not os.path.isdir(os.path.join(source, SUITES[0])):
        wheel = newest_wheel(source)
        if not wheel:
            raise NoStoredData(f"{source} holds no onnx-*.whl (scripts/fetch-onnx-test-data.sh {source} downloads it)")
        source = wheel
    if os.path.isfile(source) and source.endswith(".whl"):
        m = WHEEL_NAME.match(os.path.basename(source))
        if not m:
            raise NoStoredData(f"{source} is not named as onnx's wheel (onnx-VERSION-...whl)")
        with zipfile.ZipFile(source) as z:
            if not any(n.startswith(WHEEL_DATA_PREFIX + SUITES[0] + "/") for n in z.namelist()):
                raise NoStoredData(f"{source} holds no {WHEEL_DATA_PREFIX}{SUITES[0]}")
        return "wheel", source, m.group(1)
    version = None
    if os.path.isfile(source):  # a python executable
        found, why = package_of_python(source)
        if not found:
            raise NoStoredData(why)
        package, version = found
        if not os.path.isdir(os.path.join(package, DATA_IN_PACKAGE, SUITES[0])):
            raise NoStoredData(f"the onnx {version} of {source} does not ship {DATA_IN_PACKAGE}/{SUITES[0]} "
                               "(Debian's python3-onnx does not; the pip wheel does)")
        source = package
    if os.path.isdir(os.path.join(source, DATA_IN_PACKAGE)):
        package = source
        source = os.path.join(source, DATA_IN_PACKAGE)
        version = version or package_version(package)
    if not os.path.isdir(os.path.join(source, SUITES[0])):
        raise NoStoredData(f"{source} has no {SUITES[0]} folder: this onnx does not ship its stored test data "
                           "(Debian's python3-onnx does not; the pip wheel does)")
    return "folder", source, version or "unknown"


def package_version(package):
    """The version pip recorded next to an installed onnx package (onnx-VERSION.dist-info)."""
    infos = glob.glob(os.path.join(os.path.dirname(package), "onnx-*.dist-info"))
    m = re.match(r"onnx-(.+)\.dist-info$", os.path.basename(infos[0])) if len(infos) == 1 else None
    return m.group(1) if m else None


def copy_suites(kind, path, staging):
    """The stored suites' files under staging/<suite>/..., as the data folder has them."""
    if kind == "folder":
        for suite in SUITES:
            if os.path.isdir(os.path.join(path, suite)):
                shutil.copytree(os.path.join(path, suite), os.path.join(staging, suite))
        return
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            rest = name[len(WHEEL_DATA_PREFIX):] if name.startswith(WHEEL_DATA_PREFIX) else ""
            if rest.split("/")[0] in SUITES and not name.endswith("/"):
                target = os.path.join(staging, *rest.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with z.open(name) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)


def dummy_input(value_info):
    """onnx's backend runner's input for a light model (runner.generate_dummy_data, random=False):
    0, 1/n, 2/n, ... in the declared shape, unknown dimensions 1; float inputs only."""
    t = value_info.type.tensor_type
    if t.elem_type != 1:
        raise ValueError(f"input '{value_info.name}' is not float: onnx's runner makes up float inputs only")
    shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim)
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) / n).astype(np.float32)


def lay_out_light(light_dir):
    """Each light_X.onnx + light_X_output_K.pb becomes a case folder light_X/ with its inputs."""
    for model_path in sorted(glob.glob(os.path.join(light_dir, "*.onnx"))):
        name = os.path.splitext(os.path.basename(model_path))[0]
        case_dir = os.path.join(light_dir, name)
        data_dir = os.path.join(case_dir, "test_data_set_0")
        os.makedirs(data_dir)
        model = onnx.load(model_path)
        initialized = {t.name for t in model.graph.initializer}
        fed = [v for v in model.graph.input if v.name not in initialized]
        for k, value_info in enumerate(fed):
            tensor = numpy_helper.from_array(dummy_input(value_info), value_info.name)
            with open(os.path.join(data_dir, f"input_{k}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())
        for output in sorted(glob.glob(os.path.join(light_dir, name + "_output_*.pb"))):
            os.rename(output, os.path.join(data_dir, os.path.basename(output)[len(name) + 1:]))
        os.rename(model_path, os.path.join(case_dir, "model.onnx"))


def ensure_cases(source, out):
    """Returns (root, {suite: sorted case names}, onnx version, whether cached): the case folders
    are root/<suite>/<case>, written once per onnx version."""
    kind, path, version = locate(source)
    root = os.path.join(out, f"onnx-{version}-stored")
    stamp = os.path.join(root, "complete")
    cached = os.path.exists(stamp)
    if not cached:
        if os.path.exists(root):
            shutil.rmtree(root)
        staging = root + ".partial"
        if os.path.exists(staging):
            shutil.rmtree(staging)
        copy_suites(kind, path, staging)
        if os.path.isdir(os.path.join(staging, "light")):
            lay_out_light(os.path.join(staging, "light"))
        os.rename(staging, root)
        with open(stamp, "w") as f:
            f.write(f"{version}\n")
    cases = {suite: sorted(c for c in os.listdir(os.path.join(root, suite))
                           if os.path.isfile(os.path.join(root, suite, c, "model.onnx")))
             for suite in SUITES if os.path.isdir(os.path.join(root, suite))}
    return root, cases, version, cached


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="onnx's wheel, a folder holding it, an onnx package folder, "
                                                        "or a python whose onnx ships the data")
    parser.add_argument("--out", required=True, help="parent folder of the versioned case folders")
    args = parser.parse_args()
    try:
        root, cases, version, cached = ensure_cases(args.source, args.out)
    except NoStoredData as e:
        print(f"no stored cases: {e}")
        return 1
    counts = ", ".join(f"{suite} {len(names)}" for suite, names in cases.items())
    print(f"{root}: onnx {version}: {counts}" + (" (cached)" if cached else " (written)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
