"""Runs a parity script again under a venv's python when the current python lacks what it needs.

The Python packages some checks need (JAX and jax2onnx, onnxruntime) are not Debian packages: they
live in venvs in the build tree (scripts/prepare-test-venvs.sh). ctest starts each script with
/usr/bin/python3 and the venv's folder; the script calls reexec_in_venv first. Exits 77 (ctest's
SKIP) with a message when there is no venv, or when its python cannot import the modules either.
"""
import importlib.util
import os
import sys

SKIP = 77


def reexec_in_venv(venv, modules, prepare_hint):
    """Returns when every module imports here; otherwise runs the calling script under the venv."""
    if all(importlib.util.find_spec(m) for m in modules):
        return
    names = ", ".join(modules)
    if os.environ.get("POCK_VENV_TRIED"):
        print(f"SKIP: {sys.executable} (the venv's python) cannot import {names}: rerun {prepare_hint}")
        sys.exit(SKIP)
    python = os.path.join(venv, "bin", "python") if venv else ""
    if not python or not os.access(python, os.X_OK):
        print(f"SKIP: no venv with {names} at '{venv}' (make one with {prepare_hint})")
        sys.exit(SKIP)
    os.environ["POCK_VENV_TRIED"] = "1"
    script = os.path.abspath(sys.argv[0])
    os.execv(python, [python, script, *sys.argv[1:]])
