#!/usr/bin/env python3
"""Turn a Google Benchmark JSON report of bench_quantizers into a Markdown table.

Every quantizer's throughput is shown beside its ratio to the `memcpy` baseline of the same
run (absolute figures drift on shared machines; the ratio is the figure that counts) and
checked against its goal: element-wise formats >= 0.5x memcpy, block and MX formats >= 0.25x.

    build-bench/benchmarks/bench_quantizers --benchmark_repetitions=3 \\
        --benchmark_out=bench.json --benchmark_out_format=json
    tools/bench_table.py bench.json                          # table on stdout
    tools/bench_table.py bench.json --insert docs/benchmarks.md

With repetitions the median of each entry is used (aggregate rows, or the repetitions
themselves when only those were reported). `--insert` replaces what lies between the lines
`<!-- bench_table:begin -->` and `<!-- bench_table:end -->` of the given file.
"""

import argparse
import json
import statistics
import sys
from collections import OrderedDict

BASELINE = "memcpy"
ELEMENTWISE_GOAL = 0.5
BLOCK_GOAL = 0.25
BEGIN = "<!-- bench_table:begin -->"
END = "<!-- bench_table:end -->"


def is_block_format(fmt):
    return fmt.startswith("block_") or fmt.startswith("mx")


def split_name(run_name):
    """'quantize/fixed<8,3>/16777216' -> ('quantize', 'fixed<8,3>', '16777216');
    'memcpy/16777216' -> ('memcpy', '', '16777216')."""
    parts = run_name.split("/")
    size = parts[-1] if len(parts) > 1 and parts[-1].isdigit() else ""
    body = "/".join(parts[1:-1] if size else parts[1:])
    return parts[0], body, size


def throughputs(report):
    """Median items/s per run name, in the order the benchmarks ran."""
    medians, samples = OrderedDict(), OrderedDict()
    for b in report.get("benchmarks", []):
        if "items_per_second" not in b:
            continue
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = b["items_per_second"]
            else:
                medians.setdefault(name, None)  # keep the order
        else:
            samples.setdefault(name, []).append(b["items_per_second"])
    result = OrderedDict()
    for name in list(medians) + [n for n in samples if n not in medians]:
        value = medians.get(name)
        if value is None and name in samples:
            value = statistics.median(samples[name])
        if value is not None:
            result[name] = value
    return result


def context_line(report):
    c = report.get("context", {})
    parts = []
    host = c.get("host_name")
    cpu = c.get("mase_cpu")
    machine = ", ".join(p for p in [host, cpu] if p)
    if c.get("num_cpus"):
        machine += f" ({c['num_cpus']} CPUs at {c.get('mhz_per_cpu', '?')} MHz)"
    if machine:
        parts.append(f"machine: {machine}")
    if c.get("load_avg"):
        parts.append("load average at start: " + ", ".join(f"{x:.2f}" for x in c["load_avg"]))
    if c.get("date"):
        parts.append(f"date: {c['date']}")
    if c.get("mase_compiler"):
        parts.append(f"compiler: {c['mase_compiler']}")
    if c.get("mase_flags"):
        parts.append(f"flags: `{c['mase_flags']}`")
    return "; ".join(parts)


def table(report):
    rates = throughputs(report)
    baselines = {split_name(n)[2]: r for n, r in rates.items() if split_name(n)[0] == BASELINE}
    if not baselines:
        raise SystemExit("bench_table: the report has no memcpy baseline entry")
    lines = [
        "| format | kind | items/s (M/s) | ratio to memcpy | goal | met? |",
        "|---|---|---:|---:|---:|:---:|",
    ]
    for name, rate in rates.items():
        family, body, size = split_name(name)
        if family == BASELINE:
            lines.append(f"| memcpy (baseline, {size} floats) | — | {rate / 1e6:,.0f} | 1.00× | — | — |")
            continue
        if family != "quantize":
            continue
        base = baselines.get(size) or next(iter(baselines.values()))
        ratio = rate / base
        block = is_block_format(body)
        goal = BLOCK_GOAL if block else ELEMENTWISE_GOAL
        met = "yes" if ratio >= goal else "**no**"
        kind = "block" if block else "element-wise"
        lines.append(f"| `{body}` | {kind} | {rate / 1e6:,.0f} | {ratio:.2f}× | {goal:g}× | {met} |")
    statistic = "median of the repetitions" if any(
        b.get("run_type") == "aggregate" or b.get("repetitions", 1) > 1 for b in report.get("benchmarks", [])
    ) else "one run each"
    lines.append("")
    lines.append(f"Items/s: {statistic}. " + context_line(report) + ".")
    return "\n".join(lines) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", help="Google Benchmark JSON (--benchmark_out_format=json)")
    parser.add_argument("--insert", metavar="MARKDOWN",
                        help=f"replace the text between {BEGIN} and {END} in this file")
    args = parser.parse_args(argv)
    try:
        with open(args.report, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"bench_table: cannot read {args.report}: {e}")
    text = table(report)
    if not args.insert:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.insert, encoding="utf-8") as f:
            doc = f.read()
    except OSError as e:
        raise SystemExit(f"bench_table: cannot read {args.insert}: {e}")
    begin, end = doc.find(BEGIN), doc.find(END)
    if begin < 0 or end < begin:
        raise SystemExit(f"bench_table: {args.insert} has no {BEGIN} ... {END} section")
    doc = doc[: begin + len(BEGIN)] + "\n" + text + doc[end:]
    with open(args.insert, "w", encoding="utf-8") as f:
        f.write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
