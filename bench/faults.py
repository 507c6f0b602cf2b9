"""Endpoint faults at 50%: is a fault ever scored, and do reruns complete the set?

The long version of tests/testing/test_fault_injection.py: `app.py eval run` on needle samples (a
crop, two sub-agents and an answer each) against the scripted server, which answers
`--rate` of the requests with a 500, a 429, a hang past the client's timeout, a dropped
connection or a non-JSON 200 (testing/faults.py, the kinds in turn), the rest correctly.
The same command is rerun until no sample is an error. Targets: every scored sample right
(a fault never becomes an answer), every error unscored, the set complete, 0 duplicated.

    python bench/faults.py   # -> bench/faults.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULT = Path(__file__).with_suffix(".json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=30, help="3 samples each")
    parser.add_argument("--rate", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=50)
    parser.add_argument("--json", type=Path, default=RESULT)
    args = parser.parse_args()
    from testing.faults import FaultInjector
    from testing.scripted import ScriptedServer
    from tests.support.harness import (
        Oracle,
        accounting,
        app_env,
        eval_command,
        log_lines,
        needle_options,
        needle_samples,
        results,
        run_cli,
        run_folder,
    )

    work = Path(tempfile.mkdtemp(prefix="paravt-faults-"))
    options = needle_options(args.videos)
    samples = needle_samples(work / "data", options)
    oracle = Oracle(samples, crop_first=True)
    injector = FaultInjector(oracle, rate=args.rate, seed=args.seed, hang_s=2.0)
    env = app_env(work / "home", PARAVT_REQUEST_TIMEOUT="1")
    runs, began = [], time.perf_counter()
    with ScriptedServer(injector) as server:
        command = eval_command(
            server.base_url, work / "data", work / "out", options, concurrency=args.concurrency
        )
        for _ in range(args.max_runs):
            done = run_cli(command, env, timeout=3600)
            folder = run_folder(work / "out")
            counts = results(folder)["counts"]
            runs.append(
                {
                    "exit_code": done.returncode,
                    "scored": counts["scored"],
                    "errors": counts["errors"],
                    "tracebacks": done.stderr.count("Traceback"),
                }
            )
            if done.returncode == 0:
                break
    lines = log_lines(folder)
    scored_wrong = [
        x["sample_id"] for x in lines if x["status"] == "ok" and x["metrics"]["score"] != 1.0
    ]
    errors_scored = [x["sample_id"] for x in lines if x["status"] != "ok" and x["metrics"]]
    final = results(folder)
    report = {
        "samples": len(samples),
        "fault_rate": args.rate,
        "requests": injector.passed + sum(injector.injected.values()),
        "faults_injected": dict(injector.injected),
        "runs": runs,
        "complete_after_runs": len(runs) if runs[-1]["exit_code"] == 0 else None,
        "error_lines": sum(1 for x in lines if x["status"] != "ok"),
        "faults_scored_as_answers": len(scored_wrong),
        "errors_with_metrics": len(errors_scored),
        "accounting": accounting(folder, samples),
        "final_metrics": final["metrics"],
        "wall_s": round(time.perf_counter() - began, 1),
    }
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
