#!/usr/bin/python3
"""Runs ONNX's backend node tests through pock and compares the failures with docs/onnx.md.

Each case runs in its own run_onnx_node_test process with a timeout, so that a crash or a hang
is one failure with its reason. Exit status: 0 when the failures are exactly the listed ones,
1 when a case fails that is not listed or a listed one passes (both are named), 77 (skipped)
when this python cannot import onnx.

  run_conformance.py --runner BUILD/tests/onnx_conformance/run_onnx_node_test \\
      --cases BUILD/tests/onnx_conformance/cases --expected docs/onnx.md [--update]

--update rewrites the expected-failure table and the summary in docs/onnx.md from this run.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_PASS_RATE = 90.0
FAILURES_BEGIN, FAILURES_END = "<!-- conformance-failures:begin -->", "<!-- conformance-failures:end -->"
SUMMARY_BEGIN, SUMMARY_END = "<!-- conformance-summary:begin -->", "<!-- conformance-summary:end -->"
REASON_MAX = 160  # characters of a reason kept in the table: the start names the problem


BOUND_SUFFIX = re.compile(r" \(bound: ([^)]*)\)$")


def run_case(runner, case_dir, timeout):
    """Returns (the reason the case fails, "category: message", or None when it passes; the graph
    inputs the runner bound to the test's values, as `pockc compile --bind` would)."""
    try:
        p = subprocess.run([runner, case_dir], capture_output=True, text=True, timeout=timeout,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return f"timeout: no answer in {timeout:g} s", []
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    bound = []
    m = BOUND_SUFFIX.search(line)
    if m and p.returncode in (0, 1):
        bound = m.group(1).split(", ")
        line = line[:m.start()]
    if p.returncode == 0 and line == "PASS":
        return None, bound
    if p.returncode == 1 and line.startswith("FAIL "):
        return line[len("FAIL "):], bound
    stderr = p.stderr.strip().splitlines()
    last = stderr[-1] if stderr else "no output"
    if p.returncode < 0:
        return f"crash: {signal.Signals(-p.returncode).name}: {last}", bound
    return f"crash: exit status {p.returncode}: {last}", bound


# Where pock's messages turn from the problem to advice, which the table does not need.
ADVICE_STARTS = ("; backends asked", " (re-export", " (docs/onnx.md")

# Finer kinds of "import refused", for the summary: the first pattern found in the reason decides.
IMPORT_REFUSAL_KINDS = [
    ("uses ONNX opset", "opset outside pock's window"),
    ("no default-domain opset", "no ai.onnx opset (training ops)"),
    ("has no mapping for ONNX op", "op not mapped"),
    ("pock has no op for ONNX", "op only folded (not at run time)"),
    ("pock has no Erf op", "op only folded (not at run time)"),
    ("is not supported: pock has no float64", "dtype pock lacks"),
    ("element type", "dtype pock lacks"),
    ("is not a tensor", "sequence, map or optional value"),
    ("must be a constant", "operand must be a constant"),
    ("is a graph input", "operand must be a constant"),
    ("zero-size", "zero-size tensor"),
    ("is read by the model", "optional output pock does not write"),
]


def plain_reason(reason, case_dir):
    # Messages name the model file; the table must not name this machine's folders.
    reason = reason.replace(case_dir + os.sep + "model.onnx: ", "").replace(case_dir + os.sep, "")
    for advice in ADVICE_STARTS:
        if advice in reason:
            reason = reason[:reason.index(advice)]
    return reason.replace("|", "/")  # a table cell


def table_cell(reason):
    """The reason as the table keeps it: the start, which names the problem. Classified before
    this cut, since an `_expanded` case's long value names can push the problem past it."""
    return reason if len(reason) <= REASON_MAX else reason[:REASON_MAX - 3] + "..."


def failure_kind(reason):
    category = reason.split(":")[0]
    if category != "import refused":
        return category
    for pattern, kind in IMPORT_REFUSAL_KINDS:
        if pattern in reason:
            return f"{category}: {kind}"
    return f"{category}: other"


def op_under_test(case_dir, name):
    """The ONNX op a case tests: its single node, or what its unexpanded twin tests."""
    import onnx
    if name.endswith("_expanded"):
        twin = os.path.join(os.path.dirname(case_dir), name[:-len("_expanded")])
        if os.path.isdir(twin):
            return op_under_test(twin, os.path.basename(twin))
    graph = onnx.load(os.path.join(case_dir, "model.onnx")).graph
    ops = [n.op_type for n in graph.node if n.op_type not in ("Constant", "Identity")] or \
          [n.op_type for n in graph.node]
    return ops[-1] if ops else "(no node)"


def read_expected(docs_path):
    """{case: reason} from the table between the failure markers of docs/onnx.md."""
    with open(docs_path) as f:
        text = f.read()
    if FAILURES_BEGIN not in text or FAILURES_END not in text:
        sys.exit(f"{docs_path}: no expected-failure table (markers {FAILURES_BEGIN} ... {FAILURES_END})")
    table = text[text.index(FAILURES_BEGIN) + len(FAILURES_BEGIN):text.index(FAILURES_END)]
    expected = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("test_"):
            expected[cells[0].strip("`")] = cells[1]
    return expected


def replace_between(text, begin, end, body):
    return text[:text.index(begin) + len(begin)] + "\n" + body + text[text.index(end):]


def summary_text(results, ops, header, bound):
    total = len(results)
    failing = {n: r for n, r in results.items() if r is not None}
    passed = total - len(failing)
    lines = [f"{header}: **{total} cases, {passed} pass ({100.0 * passed / total:.1f} %)**, "
             f"target >= {TARGET_PASS_RATE:g} %.", ""]
    passed_bound = sorted(n for n, inputs in bound.items() if inputs and results[n] is None)
    if passed_bound:
        lines += [f"{len(passed_bound)} of the passing cases feed an operand that pock needs at compile time "
                  "(a shape, axes, scales, pads, ...) as a graph input: the runner binds that input to the "
                  "test's value, as `pockc compile --bind` does, and imports again. Case (bound inputs):", "",
                  ", ".join(f"{n} ({', '.join(bound[n])})" for n in passed_bound), ""]
    lines += ["| failure category | cases |", "|---|---|"]
    kinds = {name: failure_kind(r) for name, r in failing.items()}
    for kind, n in sorted(collections.Counter(kinds.values()).items(), key=lambda kn: (-kn[1], kn[0])):
        lines.append(f"| {kind} | {n} |")
    opset_kind = "import refused: " + IMPORT_REFUSAL_KINDS[0][1]
    lines += ["", "Ops with the most failing cases (an `_expanded` case counts for the op it expands; "
              "*opset*: of those, refused for the opset alone):", "",
              "| op | failing | opset | of cases |", "|---|---|---|---|"]
    all_by_op = collections.Counter(ops.values())
    by_opset = collections.Counter(ops[name] for name, kind in kinds.items() if kind == opset_kind)
    failing_by_op = collections.Counter(ops[name] for name in failing)
    for op, n in sorted(failing_by_op.items(), key=lambda on: (-on[1], on[0]))[:30]:
        lines.append(f"| {op} | {n} | {by_opset[op]} | {all_by_op[op]} |")
    return "\n".join(lines) + "\n"


def update_docs(docs_path, results, ops, header, bound):
    with open(docs_path) as f:
        text = f.read()
    rows = ["| case | reason |", "|---|---|"]
    rows += [f"| {name} | {table_cell(reason)} |" for name, reason in sorted(results.items()) if reason is not None]
    text = replace_between(text, FAILURES_BEGIN, FAILURES_END, "\n".join(rows) + "\n")
    text = replace_between(text, SUMMARY_BEGIN, SUMMARY_END, summary_text(results, ops, header, bound))
    with open(docs_path, "w") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runner", required=True, help="the run_onnx_node_test executable")
    parser.add_argument("--cases", required=True, help="folder the generated cases are cached in")
    parser.add_argument("--expected", required=True, help="docs/onnx.md, holding the expected failures")
    parser.add_argument("--update", action="store_true", help="rewrite the expected failures from this run")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--filter", default="", help="only cases whose name matches this regex")
    args = parser.parse_args()

    try:
        import onnx  # noqa: F401  (the generator needs it)
        sys.path.insert(0, HERE)
        import generate_node_tests
    except ImportError as e:
        print(f"skipped: {sys.executable} cannot import onnx ({e}); Debian: apt install python3-onnx")
        return 77

    if not os.access(args.runner, os.X_OK):
        print(f"no runner at {args.runner}: build the target run_onnx_node_test")
        return 1
    start = time.monotonic()
    node_dir, count, cached = generate_node_tests.ensure_cases(args.cases)
    names = sorted(n for n in os.listdir(node_dir) if re.search(args.filter, n))
    print(f"{count} cases of onnx {onnx.__version__} in {node_dir}" + (" (cached)" if cached else " (written)"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {n: pool.submit(run_case, args.runner, os.path.join(node_dir, n), args.timeout) for n in names}
        outcomes = {n: f.result() for n, f in futures.items()}
    results = {n: r and plain_reason(r, os.path.join(node_dir, n)) for n, (r, _) in outcomes.items()}
    bound = {n: inputs for n, (_, inputs) in outcomes.items()}
    ops = {n: op_under_test(os.path.join(node_dir, n), n) for n in names}
    elapsed = time.monotonic() - start

    header = f"onnx {onnx.__version__} node tests"
    print(summary_text(results, ops, header, bound).replace("**", ""))
    passed = sum(r is None for r in results.values())
    print(f"{len(results)} cases, {passed} pass ({100.0 * passed / max(1, len(results)):.1f} %), "
          f"target >= {TARGET_PASS_RATE:g} %  ({elapsed:.0f} s, {args.jobs} jobs)")

    if args.update:
        if args.filter:
            sys.exit("--update needs the whole run (no --filter)")
        update_docs(args.expected, results, ops, header, bound)
        print(f"updated {args.expected}")
        return 0

    expected = read_expected(args.expected)
    unexpected_failures = [n for n in names if results[n] is not None and n not in expected]
    unexpected_passes = [n for n in names if results[n] is None and n in expected]
    other_reason = [n for n in names
                    if results[n] is not None and n in expected and table_cell(results[n]) != expected[n]]
    not_generated = sorted(set(expected) - set(os.listdir(node_dir))) if not args.filter else []
    for n in unexpected_failures:
        print(f"UNEXPECTED FAILURE {n}: {results[n]}")
    for n in unexpected_passes:
        print(f"UNEXPECTED PASS {n} (listed: {expected[n]}): remove it from {args.expected}")
    if other_reason:
        print(f"{len(other_reason)} listed case(s) fail for another reason than listed (not an error), e.g.")
        for n in other_reason[:5]:
            print(f"  {n}: now '{results[n]}', listed '{expected[n]}'")
    if not_generated:
        print(f"{len(not_generated)} listed case(s) not generated by this onnx (not an error): "
              + ", ".join(not_generated[:5]))
    if unexpected_failures or unexpected_passes:
        print(f"{len(unexpected_failures)} unexpected failure(s), {len(unexpected_passes)} unexpected pass(es); "
              f"after a deliberate change: {os.path.basename(__file__)} ... --update")
        return 1
    print("failures as listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
