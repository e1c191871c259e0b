#!/usr/bin/python3
"""Runs ONNX's backend tests through pock and compares the failures with docs/onnx.md.

Two suites, each with its own table in docs/onnx.md: `node` (the default), the node tests that
onnx's generator writes (generate_node_tests.py), and `stored`, the cases onnx ships as files in
its pip wheel (stored_test_cases.py: the PyTorch-exported layer tests and small models), read from
--onnx-data.

Each case runs in its own run_onnx_node_test process with a timeout, so that a crash or a hang
is one failure with its reason. Exit status: 0 when the failures are exactly the listed ones,
1 when a case fails that is not listed or a listed one passes (both are named), 77 (skipped)
when this python cannot import onnx, or for `stored` when --onnx-data holds no stored cases.

  run_conformance.py --runner BUILD/tests/onnx_conformance/run_onnx_node_test \\
      --cases BUILD/tests/onnx_conformance/cases --expected docs/onnx.md [--update]
  run_conformance.py --suite stored --onnx-data ONNX_WHEEL_OR_FOLDER_OR_PYTHON ... (the same)

--update rewrites the suite's expected-failure table and summary in docs/onnx.md from this run.
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
# Each suite's table and summary in docs/onnx.md lie between its own pair of markers.
TABLE_PREFIX = {"node": "conformance", "stored": "stored-conformance"}
REASON_MAX = 160  # characters of a reason kept in the table: the start names the problem


def markers(suite, part):
    """The begin and end markers of a suite's `failures` table or `summary` in docs/onnx.md."""
    return tuple(f"<!-- {TABLE_PREFIX[suite]}-{part}:{end} -->" for end in ("begin", "end"))


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


def read_expected(docs_path, suite, part="failures", required=True):
    """{case: reason} from the suite's table between its `part` markers in docs/onnx.md: the
    expected failures, or ("order-dependent") the cases that pass or fail with the float summation
    order of the machine's kernels, accepted either way ({} where a suite has no such table)."""
    begin, end = markers(suite, part)
    with open(docs_path) as f:
        text = f.read()
    if begin not in text or end not in text:
        if not required:
            return {}
        sys.exit(f"{docs_path}: no expected-failure table (markers {begin} ... {end})")
    table = text[text.index(begin) + len(begin):text.index(end)]
    expected = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] != "case" and cells[0].strip("-"):
            expected[cells[0].strip("`")] = cells[1]
    return expected


def replace_between(text, begin, end, body):
    return text[:text.index(begin) + len(begin)] + "\n" + body + text[text.index(end):]


def summary_text(results, header, bound, breakdown):
    """The summary: pass rate, the passing cases that needed bound inputs, the failures by
    category, then `breakdown` (lines: the suite's own table)."""
    total = len(results)
    failing = {n: r for n, r in results.items() if r is not None}
    passed = total - len(failing)
    lines = [f"{header}: **{total} cases, {passed} pass ({100.0 * passed / max(1, total):.1f} %)**, "
             f"target >= {TARGET_PASS_RATE:g} %.", ""]
    passed_bound = sorted(n for n, inputs in bound.items() if inputs and results[n] is None)
    if passed_bound:
        lines += [f"{len(passed_bound)} of the passing cases feed an operand that pock needs at compile time "
                  "(a shape, axes, scales, pads, ...) as a graph input: the runner binds that input to the "
                  "test's value, as `pockc compile --bind` does, and imports again. Case (bound inputs):", "",
                  ", ".join(f"{n} ({', '.join(bound[n])})" for n in passed_bound), ""]
    lines += ["| failure category | cases |", "|---|---|"]
    kinds = collections.Counter(failure_kind(r) for r in failing.values())
    for kind, n in sorted(kinds.items(), key=lambda kn: (-kn[1], kn[0])):
        lines.append(f"| {kind} | {n} |")
    return "\n".join(lines + [""] + breakdown) + "\n"


def ops_breakdown(results, ops):
    """The node suite's table: the ops with the most failing cases."""
    failing = [name for name, r in results.items() if r is not None]
    opset_kind = "import refused: " + IMPORT_REFUSAL_KINDS[0][1]
    lines = ["Ops with the most failing cases (an `_expanded` case counts for the op it expands; "
             "*opset*: of those, refused for the opset alone):", "",
             "| op | failing | opset | of cases |", "|---|---|---|---|"]
    all_by_op = collections.Counter(ops.values())
    by_opset = collections.Counter(ops[name] for name in failing if failure_kind(results[name]) == opset_kind)
    failing_by_op = collections.Counter(ops[name] for name in failing)
    for op, n in sorted(failing_by_op.items(), key=lambda on: (-on[1], on[0]))[:30]:
        lines.append(f"| {op} | {n} | {by_opset[op]} | {all_by_op[op]} |")
    return lines


def suites_breakdown(results, suites):
    """The stored suites' table: cases and passes per suite (a case is named SUITE/CASE)."""
    lines = ["| suite | cases | pass | rate |", "|---|---|---|---|"]
    by_suite = {suite: [] for suite in suites}
    for name, reason in results.items():
        by_suite[name.split("/")[0]].append(reason is None)
    # The pass-rate target (issue 17) is set on the PyTorch-exported layer tests: their rate together.
    by_suite["PyTorch-exported together"] = [p for suite in suites if suite.startswith("pytorch-")
                                             for p in by_suite[suite]]
    for suite, passes in by_suite.items():
        if passes:
            lines.append(f"| {suite} | {len(passes)} | {sum(passes)} | {100.0 * sum(passes) / len(passes):.1f} % |")
    return lines


def update_docs(docs_path, suite, results, summary):
    with open(docs_path) as f:
        text = f.read()
    either = read_expected(docs_path, suite, "order-dependent", required=False)
    rows = ["| case | reason |", "|---|---|"]
    rows += [f"| {name} | {table_cell(reason)} |" for name, reason in sorted(results.items())
             if reason is not None and name not in either]
    text = replace_between(text, *markers(suite, "failures"), "\n".join(rows) + "\n")
    text = replace_between(text, *markers(suite, "summary"), summary)
    with open(docs_path, "w") as f:
        f.write(text)


class Skipped(Exception):
    """The suite cannot run here; the message says why."""


def node_cases(args):
    """({case: folder}, header, breakdown function) of the node tests, written by onnx's generator."""
    try:
        import onnx
        sys.path.insert(0, HERE)
        import generate_node_tests
    except ImportError as e:
        raise Skipped(f"{sys.executable} cannot import onnx ({e}); Debian: apt install python3-onnx")
    node_dir, count, cached = generate_node_tests.ensure_cases(args.cases)
    print(f"{count} cases of onnx {onnx.__version__} in {node_dir}" + (" (cached)" if cached else " (written)"))
    cases = {n: os.path.join(node_dir, n) for n in os.listdir(node_dir)}
    return cases, f"onnx {onnx.__version__} node tests", \
        lambda results: ops_breakdown(results, {n: op_under_test(cases[n], n) for n in results})


def stored_cases(args):
    """({SUITE/CASE: folder}, header, breakdown function) of the cases onnx ships as files."""
    try:
        sys.path.insert(0, HERE)
        import stored_test_cases
    except ImportError as e:
        raise Skipped(f"{sys.executable} cannot import onnx ({e}); Debian: apt install python3-onnx")
    try:
        root, by_suite, version, cached = stored_test_cases.ensure_cases(args.onnx_data, args.cases)
    except stored_test_cases.NoStoredData as e:
        raise Skipped(str(e))
    counts = ", ".join(f"{suite} {len(names)}" for suite, names in by_suite.items())
    print(f"onnx {version}'s stored cases in {root}: {counts}" + (" (cached)" if cached else " (written)"))
    cases = {f"{suite}/{n}": os.path.join(root, suite, n) for suite, names in by_suite.items() for n in names}
    return cases, f"onnx {version} stored tests ({', '.join(by_suite)})", \
        lambda results: suites_breakdown(results, by_suite)


def compare_with_expected(args, names, results, all_names):
    """0 when the failures are the listed ones, else 1; names what differs."""
    expected = read_expected(args.expected, args.suite)
    either = read_expected(args.expected, args.suite, "order-dependent", required=False)
    for n in [n for n in names if n in either]:
        print(f"order-dependent {n}: {'passes' if results[n] is None else 'fails'} here "
              f"(either is accepted: {either[n]})")
    names = [n for n in names if n not in either]
    unexpected_failures = [n for n in names if results[n] is not None and n not in expected]
    unexpected_passes = [n for n in names if results[n] is None and n in expected]
    other_reason = [n for n in names
                    if results[n] is not None and n in expected and table_cell(results[n]) != expected[n]]
    not_generated = sorted(set(expected) - set(all_names)) if not args.filter else []
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runner", required=True, help="the run_onnx_node_test executable")
    parser.add_argument("--cases", required=True, help="folder the cases are written to and cached in")
    parser.add_argument("--expected", required=True, help="docs/onnx.md, holding the expected failures")
    parser.add_argument("--suite", choices=sorted(TABLE_PREFIX), default="node",
                        help="node: the generated node tests; stored: the cases in onnx's wheel (--onnx-data)")
    parser.add_argument("--onnx-data", default="",
                        help="for --suite stored: onnx's wheel, a folder holding it (scripts/fetch-onnx-test-data.sh), "
                             "an installed onnx package folder, or a python whose onnx ships backend/test/data")
    parser.add_argument("--update", action="store_true", help="rewrite the expected failures from this run")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--filter", default="", help="only cases whose name matches this regex")
    args = parser.parse_args()

    start = time.monotonic()
    try:
        cases, header, breakdown = (stored_cases if args.suite == "stored" else node_cases)(args)
    except Skipped as e:
        print(f"skipped: {e}")
        return 77
    if not os.access(args.runner, os.X_OK):
        print(f"no runner at {args.runner}: build the target run_onnx_node_test")
        return 1
    names = sorted(n for n in cases if re.search(args.filter, n))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {n: pool.submit(run_case, args.runner, cases[n], args.timeout) for n in names}
        outcomes = {n: f.result() for n, f in futures.items()}
    results = {n: r and plain_reason(r, cases[n]) for n, (r, _) in outcomes.items()}
    bound = {n: inputs for n, (_, inputs) in outcomes.items()}
    summary = summary_text(results, header, bound, breakdown(results))
    elapsed = time.monotonic() - start

    print(summary.replace("**", ""))
    passed = sum(r is None for r in results.values())
    print(f"{len(results)} cases, {passed} pass ({100.0 * passed / max(1, len(results)):.1f} %), "
          f"target >= {TARGET_PASS_RATE:g} %  ({elapsed:.0f} s, {args.jobs} jobs)")

    if args.update:
        if args.filter:
            sys.exit("--update needs the whole run (no --filter)")
        update_docs(args.expected, args.suite, results, summary)
        print(f"updated {args.expected}")
        return 0
    return compare_with_expected(args, names, results, cases)


if __name__ == "__main__":
    sys.exit(main())
