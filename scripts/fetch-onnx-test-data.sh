#!/usr/bin/env bash
# Downloads onnx's pip wheel into DEST for the ctest entry onnx_conformance/stored: the wheel holds
# the test cases onnx keeps as files (onnx/backend/test/data: the PyTorch-exported layer tests and
# a few small models), which Debian's python3-onnx leaves out. Nothing is installed; the test reads
# the wheel as a zip. Best effort: without a download the test is skipped and says why.
#   scripts/fetch-onnx-test-data.sh [DEST]    (default build/onnx-test-data; `make test` calls it)
set -euo pipefail

# The onnx whose stored cases docs/onnx.md's table lists ("Conformance: onnx's stored tests").
ONNX_VERSION=1.23.2
dest=${1:-build/onnx-test-data}
python=${PYTHON:-/usr/bin/python3}

if compgen -G "$dest/onnx-$ONNX_VERSION-*.whl" > /dev/null; then
  exit 0
fi
mkdir -p "$dest"
# --only-binary: the wheel, never a source build; --no-deps: only onnx's own files are wanted.
if ! "$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --timeout 30 --retries 1 --dest "$dest" "onnx==$ONNX_VERSION"; then
  echo "warning: could not download onnx $ONNX_VERSION's wheel into $dest: ctest skips onnx_conformance/stored" >&2
fi
