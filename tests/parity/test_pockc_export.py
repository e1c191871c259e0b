#!/usr/bin/python3
"""pockc export into ONNX, safetensors and .npz, checked against PyTorch: a small CNN trained a few
steps with a sparse recipe (a BatchNorm folded into its frozen convolution, a partial-channel
weight, running statistics that training updates; export_model.py), then
  (i)  the exported ONNX, compiled again by pock, infers what the trained engine infers;
  (ii) PyTorch's own module with the exported initializers loaded by name infers the same;
  (iii) exactly the tensors training changed are replaced, bit for bit, from any storage of the
       source (raw_data, float_data, external data), and the output can hold external data;
  (iv) the safetensors and .npz copies (read here with json + numpy) hold the same values;
  (v)  bad input is refused with a message naming the problem, and leaves no output file.

Usage: test_pockc_export.py --pockc PATH. Exit 0 passed, 1 failed, 77 skipped (no torch/onnx).
"""
import argparse
import json
import os
import sys
import tempfile
import warnings

try:
    import numpy as np
    import onnx
    import torch
    from onnx import helper, numpy_helper
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_model as em  # noqa: E402

FAILURES = []
TOL = 1e-4  # float32 inference of the same weights by two programs (folds round differently)


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def initializers(path):
    return {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}


def bit_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def read_safetensors(path):
    """The format by hand (no safetensors package under Debian's python): u64 header length, JSON
    header, data."""
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    out = {}
    for name, h in header.items():
        b, e = h["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtypes[h["dtype"]]).reshape(h["shape"])
    return out


def torch_infer(model, weights, x):
    state = model.state_dict()
    for name, value in weights.items():
        if name in state:
            state[name] = torch.from_numpy(value.copy())
    m = em.build_torch_model()
    m.load_state_dict(state)
    m.eval()
    with torch.no_grad():
        return m(torch.from_numpy(x)).numpy()


def check_outputs(pockc, d, f, source_path, model):
    x = np.load(f["x"])["x"]
    trained = np.load(f["pock_out"])["logits"]
    blob, out = os.path.join(d, "reimport.pock"), os.path.join(d, "reimport_out.npz")
    rc, msg = em.run(pockc, "compile", f["export"], "-o", blob)
    rc2, msg2 = em.run(pockc, "infer", blob, "--data", f["x"], "--out", out) if rc == 0 else (rc, "")
    check(rc == 0 and rc2 == 0, "the export compiles and infers in pock" + ("" if rc == 0 and rc2 == 0 else f": {msg}{msg2}"))
    if rc == 0 and rc2 == 0:
        diff = float(np.abs(np.load(out)["logits"] - trained).max())
        check(diff <= TOL, f"(i) pock on the export infers what the trained engine infers (max abs diff {diff:.2e})")
    exported = initializers(f["export"])
    diff = float(np.abs(torch_infer(model, exported, x) - trained).max())
    check(diff <= TOL, f"(ii) PyTorch with the exported initializers infers what pock's trained engine does "
                       f"(max abs diff {diff:.2e})")
    before = float(np.abs(torch_infer(model, initializers(source_path), x) - trained).max())
    check(before > 100 * TOL, f"training changed the outputs, so (i) and (ii) can fail (source vs trained {before:.2e})")


def check_initializers(f, source_path, outputs):
    source, exported = initializers(source_path), initializers(f["export"])
    saved = dict(np.load(f["weights"]))  # --save-weights: the engine's parameters, read another way
    changed = {n for n in source if not bit_equal(source[n], exported[n])}
    check(changed == em.TRAINED, f"exactly the trained tensors are replaced: {sorted(changed)}")
    check(set(exported) == set(source), "every initializer is kept, none added")
    check(all(source[n].dtype == exported[n].dtype and source[n].shape == exported[n].shape for n in source),
          "every initializer keeps its dtype and shape")
    params = [n for n in em.TRAINED if n in saved]
    check(len(params) == 4 and all(bit_equal(exported[n], saved[n]) for n in params),
          "trained parameters equal --save-weights bit for bit")
    rows = exported["conv2.weight"][3:] == source["conv2.weight"][3:]
    check(rows.all() and not (exported["conv2.weight"][:3] == source["conv2.weight"][:3]).all(),
          "conv2.weight: the 3 trained output channels changed, the 3 frozen ones did not")
    listed = {line.split()[1] for line in outputs["export"].splitlines() if line.strip().startswith("replaced")}
    check(listed == em.TRAINED, "--verbose lists the replaced initializers")
    check("6 initializer(s) replaced, 0 equal to the source, 6 kept" in outputs["export"],
          "the summary counts the replaced initializers: " +
          next((line for line in outputs["export"].splitlines() if line.startswith("wrote")), "(no summary)"))


def training_modes(path):
    return [helper.get_attribute_value(a) for n in onnx.load(path).graph.node if n.op_type == "BatchNormalization"
            for a in n.attribute if a.name == "training_mode"]


def check_inference_form(pockc, d, f, source_path):
    check(training_modes(source_path) == [1, 1] and training_modes(f["export"]) == [0, 0] and
          all(len(n.output) == 1 for n in onnx.load(f["export"]).graph.node if n.op_type == "BatchNormalization"),
          "BatchNormalization is written in inference form (training_mode 0, no statistics outputs)")
    out = os.path.join(d, "training_form.onnx")
    rc, msg = em.run(pockc, "export", f["ckpt"], "--onnx", source_path, "-o", out, "--keep-training-form")
    check(rc == 0 and training_modes(out) == [1, 1], "--keep-training-form keeps training_mode 1" + ("" if rc == 0 else f": {msg}"))


def check_storage_forms(pockc, d, f, source_path):
    reference = initializers(f["export"])
    m = onnx.load(source_path)
    for t in m.graph.initializer:  # typed float_data instead of raw_data
        a = numpy_helper.to_array(t)
        if a.dtype == np.float32:
            t.CopyFrom(helper.make_tensor(t.name, onnx.TensorProto.FLOAT, a.shape, a.flatten().tolist(), raw=False))
    typed = os.path.join(d, "typed.onnx")
    onnx.save(m, typed)
    ext_dir = os.path.join(d, "ext")
    os.makedirs(ext_dir)
    external = os.path.join(ext_dir, "external.onnx")
    onnx.save_model(onnx.load(source_path), external, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="external.onnx.bin", size_threshold=0)
    for name, src in [("float_data", typed), ("external data", external)]:
        out = os.path.join(d, f"from_{name.replace(' ', '_')}.onnx")
        rc, msg = em.run(pockc, "export", f["ckpt"], "--onnx", src, "-o", out)
        ok = rc == 0 and all(bit_equal(v, reference[k]) for k, v in initializers(out).items())
        check(ok and os.path.getsize(out) > 4000, f"a source with {name}: the same self-contained export" +
              ("" if rc == 0 else f": {msg}"))
    out = os.path.join(d, "ext_out", "split.onnx")
    os.makedirs(os.path.dirname(out))
    rc, msg = em.run(pockc, "export", f["ckpt"], "--onnx", source_path, "-o", out, "--external-data")
    loaded = initializers(out) if rc == 0 else {}
    check(rc == 0 and os.path.exists(out + ".data") and loaded.keys() == reference.keys()
          and all(bit_equal(v, reference[k]) for k, v in loaded.items()),
          "--external-data: onnx.load reads OUT.onnx with OUT.onnx.data, the same values" + ("" if rc == 0 else f": {msg}"))
    blob = os.path.join(d, "split.pock")
    rc, msg = em.run(pockc, "compile", out, "-o", blob)
    check(rc == 0, "pock compiles the export with external data" + ("" if rc == 0 else f": {msg}"))


def check_copies(pockc, d, f, source_path):
    exported = initializers(f["export"])
    st, npz = os.path.join(d, "p.safetensors"), os.path.join(d, "p.npz")
    rc, msg = em.run(pockc, "export", f["ckpt"], "--onnx", source_path, "--safetensors", st, "--npz", npz)
    check(rc == 0, "export a checkpoint to safetensors and .npz" + ("" if rc == 0 else f": {msg}"))
    if rc == 0:
        for what, got in [("safetensors", read_safetensors(st)), (".npz", dict(np.load(npz)))]:
            check(set(got) == em.TRAINED and all(bit_equal(got[n], exported[n]) for n in got),
                  f"{what} from the checkpoint: the trained tensors by source name, bit for bit ({sorted(got)})")
    saved = dict(np.load(f["weights"]))
    rc, msg = em.run(pockc, "export", f["weights"], "--safetensors", st)
    got = read_safetensors(st) if rc == 0 else {}
    check(rc == 0 and got.keys() == saved.keys() and all(bit_equal(got[n], saved[n]) for n in saved),
          "safetensors of --save-weights: every parameter, bit for bit" + ("" if rc == 0 else f": {msg}"))
    out = os.path.join(d, "from_npz.onnx")
    rc, msg = em.run(pockc, "export", f["weights"], "--onnx", source_path, "-o", out)
    check(rc == 0 and "bn1.running_" in msg and "--checkpoint" in msg,
          "export from --save-weights names the running statistics it cannot update: " + msg.strip().splitlines()[-1])


def check_refusals(pockc, d, f, source_path):
    saved = dict(np.load(f["weights"]))
    out = os.path.join(d, "refused.onnx")

    def refused(arrays, expect, what, weights=None):
        path = weights or os.path.join(d, "bad.npz")
        if arrays is not None:
            np.savez(path, **arrays)
        rc, msg = em.run(pockc, "export", path, "--onnx", source_path, "-o", out)
        check(rc != 0 and all(e in msg for e in expect) and not os.path.exists(out),
              f"{what} is refused, naming it, and writes nothing: {msg.strip().splitlines()[-1] if msg.strip() else ''}")

    refused({**saved, "conv2.weight": saved["conv2.weight"][:3]}, ["'conv2.weight'", "[6, 8, 3, 3]", "[3, 8, 3, 3]"],
            "a shape that differs")
    refused({**saved, "fc.bias": saved["fc.bias"].astype(np.float16)}, ["'fc.bias'", "f16", "f32"], "a dtype that differs")
    refused({"other.weight": saved["fc.weight"]}, ["none of the 1 tensors"], "weights of another model")
    refused({**saved, "fc.lora_A.weight": np.zeros((2, 6), np.float32)}, ["fc.lora_A.weight", "--merge-lora"],
            "an unmerged LoRA adapter")
    rc, msg = em.run(pockc, "export", f["ckpt"], "--safetensors", os.path.join(d, "x.safetensors"))
    check(rc != 0 and "--onnx" in msg, "a checkpoint without --onnx is refused (it has no shapes): " + msg.strip())
    rc, msg = em.run(pockc, "export", f["weights"], "-o", out)
    check(rc != 0 and "--onnx" in msg, "-o without a source model is refused: " + msg.strip())
    torn = os.path.join(d, "torn.ckpt")
    with open(f["ckpt"], "rb") as src, open(torn, "wb") as dst:
        dst.write(src.read()[:-9])
    refused(None, ["checksum"], "a truncated checkpoint", weights=torn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pockc", required=True)
    pockc = ap.parse_args().pockc
    warnings.filterwarnings("ignore")
    model = em.build_torch_model()
    with tempfile.TemporaryDirectory() as d:
        source_path = os.path.join(d, "net.onnx")
        em.export_torch_model(model, source_path)
        try:
            f, outputs = em.train_and_export(pockc, source_path, d)
        except RuntimeError as e:
            check(False, str(e))
            return 1
        check_outputs(pockc, d, f, source_path, model)
        check_initializers(f, source_path, outputs)
        check_inference_form(pockc, d, f, source_path)
        check_storage_forms(pockc, d, f, source_path)
        check_copies(pockc, d, f, source_path)
        check_refusals(pockc, d, f, source_path)
    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
