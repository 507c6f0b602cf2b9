"""Fuzzing the output parser and every task's scorer with model-like garbage.

`agents.protocol.parse`, and each task's `score` under each of its profiles (through
`evals.tasks.TASKS`, on generic samples the profile accepts: tests/support/fuzz_targets.py), get
the same seeded strings (tests/support/fuzz_strings.py). Targets: nothing raises, every score is a
mapping of finite numbers. Each target runs in its own process under a time budget; one
that hits it (a pathological input can make a regex run for minutes) reports how far it
got and its slowest call.

    python bench/fuzz.py                               # 100,000 strings -> bench/fuzz.json
    python bench/fuzz.py --strings 2000 --budget-s 60
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULT = Path(__file__).with_suffix(".json")


def child(target_name: str, n: int, seed: int, progress: Path) -> dict:
    """Fuzz one target in this process; write progress as it goes, return the figures."""
    from tests.support.fuzz_strings import fuzz_strings
    from tests.support.fuzz_targets import (
        bad_metrics,
        bad_parse,
        fuzz,
        parser_target,
        scorer_targets,
    )

    if target_name == "parser":
        target, check = parser_target, bad_parse
    else:
        target, check = scorer_targets()[target_name], bad_metrics
    slowest = [0.0, ""]

    def call(text: str, i: int):
        began = time.perf_counter()
        try:
            return target(text, i)
        finally:
            took = time.perf_counter() - began
            if took > slowest[0]:
                slowest[:] = [took, text[:120]]
            if i % 200 == 0:
                progress.write_text(json.dumps({"calls": i, "slowest_call_s": slowest[0]}))

    began = time.perf_counter()
    report = fuzz(call, fuzz_strings(n, seed), check=check)
    report.update(
        seconds=round(time.perf_counter() - began, 1),
        slowest_call_s=round(slowest[0], 3),
        slowest_input=slowest[1],
    )
    return report


def run_child(name: str, args: argparse.Namespace) -> dict:
    progress = Path(tempfile.mktemp(prefix="paravt-fuzz-"))
    command = [sys.executable, __file__, "--child", name, "--strings", str(args.strings)]
    command += ["--seed", str(args.seed), "--progress", str(progress)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.budget_s, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        seen = json.loads(progress.read_text()) if progress.exists() else {}
        return {"budget_hit": True, "budget_s": args.budget_s, **seen}
    if done.returncode != 0:
        return {"child_failed": done.stderr[-1500:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strings", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget-s", type=float, default=300.0, help="per target")
    parser.add_argument("--json", type=Path, default=RESULT)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--progress", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.strings, args.seed, args.progress)))
        return
    from evals.tasks import TASKS
    from tests.support.fuzz_targets import accepted_samples

    report = {"strings": args.strings, "seed": args.seed, "targets": {}, "refused": {}}
    names = ["parser"]
    for task_name, task in sorted(TASKS.items()):
        for profile in task.profiles:
            samples, refused = accepted_samples(task, profile)
            if refused:
                report["refused"][f"{task_name}/{profile}"] = refused
            if samples:
                names.append(f"{task_name}/{profile}")
    for name in names:
        entry = run_child(name, args)
        report["targets"][name] = entry
        shown = {k: entry.get(k) for k in ("calls", "raised", "bad_results", "seconds")}
        print(name, json.dumps(shown), flush=True)
    entries = report["targets"].values()
    report["raised_total"] = sum(sum(e.get("raised", {}).values()) for e in entries)
    report["bad_results_total"] = sum(e.get("bad_results", 0) for e in entries)
    report["budget_hit"] = [n for n, e in report["targets"].items() if e.get("budget_hit")]
    report["cpus"] = os.cpu_count()
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: report[k] for k in ("raised_total", "budget_hit")}, indent=2))


if __name__ == "__main__":
    main()
