"""Figures as dicts: the compiler's report (Blob.report) and `pockc inspect --json`'s (pockengine.inspect,
Engine.inspect), equal to what pockc prints for the same blob."""
import json
import subprocess
import unittest

from common import BlobTest, pockc_or_skip, pockengine


class InspectTest(BlobTest):
    def test_figures(self):
        report = pockengine.inspect(self.blob_path)
        self.assertEqual(report["blob"], self.blob_path)
        self.assertEqual([f["name"] for f in report["functions"]], ["infer", "train", "eval"])
        self.assertEqual(report["step_function"], "train")
        flops = report["flops"]
        self.assertEqual(flops["total"], sum(flops[p] for p in ("forward", "loss", "backward", "optimizer")))
        self.assertGreater(flops["backward"], 0)
        engine = self.blob.open()
        self.assertEqual(report["parameters"]["trainable_count"], len(engine.trainable_parameter_names))
        for key, value in self.blob.report["memory"].items():  # the compiler's figures, as stored in the blob
            self.assertEqual(report["memory"][key], value, key)
        self.assertIsNone(report["backends"]["bind_error"])
        self.assertEqual(len(report["ops"]), sum(f["ops"] for f in report["functions"]))

    def test_engine_and_blob_inspect(self):
        by_path = pockengine.inspect(self.blob_path)
        engine = pockengine.Engine(self.blob.data)
        by_engine = engine.inspect()
        self.assertEqual(by_engine["blob"], "<memory>")
        by_engine["blob"] = self.blob_path
        self.assertEqual(by_engine, by_path)
        self.assertEqual(pockengine.inspect(self.blob), by_path)
        in_memory = pockengine.Blob(self.blob.data, self.blob.report)
        self.assertEqual(in_memory.inspect()["memory"], by_path["memory"])
        # "bound" counts the backends that bind ops; a usable one may bind none (cuda, for a host blob).
        bound = {b["name"]: b["ops_bound"] for b in engine.backends() if b["usable"] and b["ops_bound"]}
        self.assertEqual(bound, by_path["backends"]["bound"])

    def test_same_as_pockc_inspect(self):
        pockc = pockc_or_skip()
        out = subprocess.run([pockc, "inspect", self.blob_path, "--json"], check=True, capture_output=True, text=True).stdout
        self.assertEqual(pockengine.inspect(self.blob_path), json.loads(out))
        out = subprocess.run([pockc, "inspect", self.blob_path, "--json", "--backend", "ref"], check=True,
                             capture_output=True, text=True).stdout
        self.assertEqual(pockengine.inspect(self.blob_path, backend="ref"), json.loads(out))


if __name__ == "__main__":
    unittest.main(verbosity=2)
