"""Write a finished run as lmms-eval@75571cf writes one (its ``__main__``, ``evaluator``,
``evaluator_utils``, ``loggers/evaluation_tracker``): ``<run>/lmms_eval/<model>/`` holds
``<date_id>_results.json`` and ``<date_id>_samples_<task>.jsonl``, a pair per ``eval run`` and
``eval rescore``. Fields with no meaning here are filled as lmms-eval fills them for an API
model (``--model openai``, CLI defaults). Tasks it lacks keep this project's name. Decisions:

- ``doc_hash`` hashes the doc (this project's sample JSON) as lmms-eval's code means to; at
  75571cf it hashes ``Instance.doc``, never set, so every doc there hashes ``null``.
- Token counts, ``usage`` and ``throughput`` come from each sample's trace cost (all its model
  calls; reasoning tokens uncounted, 0); ``usage.by_task`` names the task, where lmms-eval
  files API calls under ``_unknown``. The tracker's times stay ``None`` (its defaults): a
  resumable run spans processes; per-sample wall times are in samples.jsonl.
- ``versions`` are lmms-eval's ``"Yaml"`` (its list-form ``metadata: - version:`` is never
  read); the YAML's version stays in ``configs[task]["metadata"]``, with the run's profile.
- ``config.model`` is ``paravt_graph``, ``model_args`` names the served model,
  ``resolved_cli_args`` holds the spec and profile; the git fields describe this checkout.
- Under an ``lmms_eval*`` profile only lmms-eval's metrics are written, named as its YAML
  names them; other profiles write every aggregate they report. ``_stderr`` is the per-item
  standard error for a mean aggregation, else ``"N/A"``; ``_stderr_clt`` that of ``score``.
- Per sample, a mean metric holds its per-item value; any other a dict of ``score``,
  ``pred_answer``, ``answer`` (what lmms-eval's readers use), the cluster, the categories and
  per-item metrics. Only scored samples are written; ``n-samples.effective`` counts them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from evals.records import sample_from_json
from evals.spec import EvalSpec
from evals.tasks.base import Task

LAYOUT_SOURCE = "EvolvingLMMs-Lab/lmms-eval@75571cf"
FILTER = "none"  # lmms-eval's filter name when a task declares no filter_list
TIMEZONE = timezone(timedelta(hours=8))  # lmms-eval's default --timezone, Asia/Singapore
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff")
NA = "N/A"
API_MODEL_CONFIG = {  # simple_evaluate's execution fields for an API model, CLI defaults
    **{"batch_size": 1, "batch_sizes": [], "device": None, "use_cache": None, "limit": None},
    **{"offset": 0, "bootstrap_iters": 100000, "gen_kwargs": "", "random_seed": 0},
    **{"numpy_seed": 1234, "torch_seed": 1234, "fewshot_seed": 1234},
}
TRACKER_UNUSED = {  # GeneralConfigTracker fields: no system prompt, chat template or timer
    **dict.fromkeys(("system_instruction", "system_instruction_sha"), None),
    **{"fewshot_as_multiturn": False, "chat_template": None, "chat_template_sha": None},
    **dict.fromkeys(("start_time", "end_time", "total_evaluation_time_seconds"), None),
}


@dataclass(frozen=True)
class LmmsTask:
    """How lmms-eval names and configures a task (its YAML at 75571cf)."""

    name: str
    metrics: dict[str, str] = field(default_factory=dict)  # our aggregate key -> its name
    means: dict[str, tuple[str, type]] = field(default_factory=dict)  # name -> (item key, type)
    cluster_key: str | None = None
    metadata: tuple[dict[str, Any], ...] = ()


VERSION_0 = ({"version": 0.0},)
LMMS_TASKS = {
    "videomme": LmmsTask(
        "videomme",
        {"videomme_perception_score": "videomme_perception_score"},
        cluster_key="videoID",
        metadata=VERSION_0,
    ),
    "charades": LmmsTask(
        "temporal_grounding_charades",
        {k: f"charades_sta_{k}" for k in ("IOU@3", "IOU@5", "IOU@7", "mIOU")},
    ),
    "longvideobench": LmmsTask("longvideobench_val_v", {"lvb_acc": "lvb_acc"}),
    "mlvu": LmmsTask("mlvu_dev", {"mlvu_percetion_score": "mlvu_percetion_score"}),
    "lvbench": LmmsTask(
        "lvbench",
        {"lvbench_score": "lvbench_score"},
        {"lvbench_score": ("correct", bool)},
        metadata=VERSION_0,
    ),
    "mmvu": LmmsTask("mmvu_val", {"accuracy": "accuracy"}),
}
# The means among this project's other profiles: metric -> the per-item value it averages.
OTHER_MEANS = {
    ("needle", "official"): {"mean_score": "score"},
    ("lvbench", "official"): {"acc": "correct"},
    **{(t, "paravt"): {"accuracy": "correct"} for t in ("videomme", "mlvu", "longvideobench")},
    ("lvbench", "paravt"): {"accuracy": "correct"},
}


def write_lmms_eval_files(
    folder: str | Path,
    task: Task,
    spec: EvalSpec,
    records: Sequence[Mapping[str, Any]],
    results: Mapping[str, Any],
    profile: str,
    *,
    n_docs: int | None = None,
) -> tuple[Path, Path]:
    """Write the results JSON and samples JSONL of scored `records` (`results` summarises
    them under `profile`); `n_docs` is the split's size. Returns the two paths."""
    entry = LMMS_TASKS.get(task.name) or LmmsTask(task.name, cluster_key="cluster")
    ok = sorted((r for r in records if r["status"] == "ok"), key=lambda r: r["doc_id"])
    if profile.startswith("lmms_eval") and task.name in LMMS_TASKS:
        names = {k: v for k, v in entry.metrics.items() if k in results["metrics"]}
        means = entry.means
    else:
        names = {k: k for k, v in results["metrics"].items() if isinstance(v, (int, float))}
        means = {m: (k, float) for m, k in OTHER_MEANS.get((task.name, profile), {}).items()}
    samples = [_sample_line(task, entry, r, names, means) for r in ok]
    date = datetime.fromtimestamp(results["written_at"], TIMEZONE).strftime("%Y%m%d_%H%M%S")
    counts = results["counts"]
    original = counts["samples"] + counts["skipped_missing_media"] if n_docs is None else n_docs
    name = entry.name
    document = {
        "results": {name: _task_results(entry, ok, names, means, results)},
        "group_subtasks": {name: []},
        "configs": {name: _task_config(entry, task, spec, names, means, profile)},
        "versions": {name: "Yaml"},
        "n-shot": {name: 0},
        "higher_is_better": {name: {m: True for m in names.values()}},
        "n-samples": {name: {"original": original, "effective": len(ok)}},
        **_run_fields(spec, profile, date, name, ok, samples),
    }
    out = Path(folder) / "lmms_eval" / sanitize_model_name(spec.model)
    samples_file, results_file = out / f"{date}_samples_{name}.jsonl", out / f"{date}_results.json"
    _write_atomic(samples_file, "".join(_dumps(s) + "\n" for s in samples))
    _write_atomic(results_file, _dumps(document, indent=2))
    return results_file, samples_file


def _task_results(entry, ok, names, means, results) -> dict[str, Any]:
    """``alias``, then per metric its value and stderr keys, as evaluator_utils writes them."""
    out: dict[str, Any] = {"alias": entry.name}
    for ours, name in names.items():
        key = means[name][0] if name in means else "score"
        scored = [r for r in ok if key in r["metrics"]]
        se = results["per_item"].get(key, {}).get("se") if len(scored) > 1 else None
        out[f"{name},{FILTER}"] = results["metrics"][ours]
        out[f"{name}_stderr,{FILTER}"] = se if name in means and se is not None else NA
        out[f"{name}_stderr_clt,{FILTER}"] = NA if se is None else se
        scores = [float(r["metrics"][key]) for r in scored]
        clusters = [sample_from_json(r["sample"]).cluster for r in scored]
        clustered = _clustered_stderr(scores, clusters) if entry.cluster_key else None
        out[f"{name}_stderr_clustered,{FILTER}"] = NA if clustered is None else clustered
    return out


def _clustered_stderr(scores: Sequence[float], clusters: Sequence[str]) -> float | None:
    """Eq. 4 of arXiv:2411.00640, as lmms-eval reports it: the CLT variance plus the
    within-cluster cross terms; None below two items or two clusters."""
    n = len(scores)
    if n < 2 or len(set(clusters)) < 2:
        return None
    mean = sum(scores) / n
    clt = sum((s - mean) ** 2 for s in scores) / (n - 1) / n
    deviations: dict[str, list[float]] = {}
    for s, c in zip(scores, clusters, strict=True):
        deviations.setdefault(c, []).append(s - mean)
    cross = sum(sum(d) ** 2 - sum(x * x for x in d) for d in deviations.values()) / n**2
    return math.sqrt(max(clt + cross, 0.0))


def _task_config(entry, task, spec, names, means, profile) -> dict[str, Any]:
    """The fields ``TaskConfig.to_dict()`` writes, filled with what this run did: doc fields
    name this project's sample JSON, callables print as lmms-eval prints them."""
    ctx = spec.context
    generation = {k: ctx[k] for k in ("max_new_tokens", "temperature", "top_p") if k in ctx}
    if "temperature" in ctx:
        generation["do_sample"] = ctx["temperature"] > 0
    metric_list = [
        {"metric": m, "aggregation": "mean" if m in means else str(task.aggregate)}
        | {"higher_is_better": True}
        for m in names.values()
    ]
    ours = {"paravt_task": task.name, "profile": profile, "source": task.profile(profile).source}
    return {
        "task": entry.name,
        "dataset_path": spec.data_dir,
        "dataset_kwargs": dict(spec.options),
        **{"full_docs": False, "process_results_use_image": False, "doc_to_visual": "media"},
        "doc_to_text": str(task.render_prompt) if task.render_prompt else "prompt",
        "doc_to_target": "target",
        "process_results": str(task.score),
        **{"description": "", "target_delimiter": " ", "fewshot_delimiter": "\n\n"},
        **{"num_fewshot": 0, "metric_list": metric_list, "output_type": "generate_until"},
        **{"generation_kwargs": generation, "repeats": spec.votes, "should_decontaminate": False},
        **({"cluster_key": entry.cluster_key} if entry.cluster_key else {}),
        "score_key": "score",
        "metadata": [*entry.metadata, ours | {"spec_hash": spec.hash, "layout": LAYOUT_SOURCE}],
        "auto_strip_thinking": False,
    }


def _sample_line(task, entry, record, names, means) -> dict[str, Any]:
    """One line as save_results_samples writes it: a single request's lists flattened,
    ``resps`` dropped when equal to ``filtered_resps``, ``doc``/``arguments`` left for
    ``input``."""
    sample = sample_from_json(record["sample"])
    resps, filtered = ([str(x) for x in record[k]] for k in ("resps", "filtered_resps"))
    resps, filtered = (x[0] if len(x) == 1 else x for x in (resps, filtered))
    line: dict[str, Any] = {"doc_id": record["doc_id"], "target": str(record["target"])}
    if resps != filtered:
        line["resps"] = resps
    cost, tokens = record.get("cost"), None
    if cost:
        tokens = {"input_tokens": cost["prompt_tokens"], "output_tokens": cost["completion_tokens"]}
        tokens["reasoning_tokens"] = 0
    line |= {"filtered_resps": filtered, "token_counts": [tokens]}
    line["doc_hash"] = doc_hash(record["sample"])
    if sample.media.lower().endswith(IMAGE_EXTENSIONS):
        line["input_media"] = [sample.media]
    item = record["metrics"]
    for name in names.values():
        if name in means:
            key, kind = means[name]
            line[name] = kind(item[key])
        else:
            found = {"pred_answer": record.get("extracted"), "answer": sample.target}
            cluster = {entry.cluster_key or "cluster": sample.cluster}
            line[name] = {**sample.categories, **item, **found, **cluster}
    times = record.get("overview_timestamps")
    rendered = task.render_prompt and times and task.render_prompt(sample, times)
    line["input"] = rendered or sample.prompt
    return line


def doc_hash(doc: Any) -> str:
    """sha256 of the doc dumped as lmms-eval dumps it for ``doc_hash``."""
    return hashlib.sha256(_dumps(doc, indent=2).encode("utf-8")).hexdigest()


def _run_fields(spec, profile, date, task_name, ok, samples) -> dict[str, Any]:
    """The run-level keys simple_evaluate, __main__ and the tracker add, in their order."""
    costs = [r["cost"] for r in ok if r.get("cost")]
    commit, branch = _git("describe", "--always"), _git("branch", "--show-current")
    fields: dict[str, Any] = {
        "config": {
            "model": "paravt_graph",
            "model_args": f"model_version={spec.model}",
            "model_backend": "graphs.runs.run.run_question (chat)",
            **API_MODEL_CONFIG,
            "resolved_cli_args": {**spec.to_json(), "profile": profile},
        },
        "git_hash": commit,
        "git_branch": branch or ("detached" if commit else None),
        "lmms_eval_version": f"{branch or 'unknown'}@{(commit or 'unknown')[:8]}",
        "date": date,
    }
    if costs:
        tokens = sum(c["completion_tokens"] for c in costs)
        elapsed = sum(c.get("latency_s", 0.0) for c in costs)
        speed = tokens / elapsed if elapsed > 0 else 0.0
        fields["throughput"] = {"total_gen_tokens": tokens, "total_elapsed_time": elapsed}
        fields["throughput"]["avg_speed"] = speed
    fields["usage"] = _usage(costs, task_name) if costs else {}
    if samples:
        fields["efficiency"] = _efficiency(task_name, samples, ok)
    marks = "".join(f"sample_{i}{s['doc_hash']}" for i, s in enumerate(samples))
    hashes = {task_name: hashlib.sha256(marks.encode()).hexdigest()} if samples else {}
    model = {"model_source": "paravt_graph", "model_name": spec.model}
    model["model_name_sanitized"] = sanitize_model_name(spec.model)
    return fields | {"task_hashes": hashes} | model | TRACKER_UNUSED


def _usage(costs: Sequence[Mapping[str, Any]], task_name: str) -> dict[str, Any]:
    tokens_in = sum(c["prompt_tokens"] for c in costs)
    tokens_out = sum(c["completion_tokens"] for c in costs)
    total = {"input_tokens": tokens_in, "output_tokens": tokens_out, "reasoning_tokens": 0}
    total |= {"total_tokens": tokens_in + tokens_out}
    total["n_api_calls"] = sum(c["model_calls"] for c in costs)
    by = {"by_task": {task_name: dict(total)}, "by_source": {"model": dict(total)}}
    return {"total": total, **by, "budget_exceeded": False, "budget_total_tokens": None}


def _efficiency(task_name: str, samples: Sequence[Mapping], ok: Sequence[Mapping]) -> dict:
    """Tokens per doc and per correct answer (a doc's positive ``score`` counts)."""
    counted = [s["token_counts"][0] for s in samples if s["token_counts"][0]]
    tokens_in = float(sum(t["input_tokens"] for t in counted))
    tokens_out = float(sum(t["output_tokens"] for t in counted))
    correct = float(sum(max(float(r["metrics"].get("score", 0.0)), 0.0) for r in ok))
    summary = {"docs": float(len(samples)), "docs_with_token_counts": float(len(counted))}
    summary |= {"total_input_tokens": tokens_in, "total_output_tokens": tokens_out}
    summary |= {"total_tokens": tokens_in + tokens_out, "total_correct_score": correct}
    summary["avg_output_tokens_per_sample"] = tokens_out / len(counted) if counted else 0.0
    summary["tokens_per_correct_answer"] = tokens_out / correct if correct > 0 else None
    return {"by_task": {task_name: summary}, "overall": dict(summary)}


def sanitize_model_name(model: str) -> str:
    """The model folder's name as the tracker makes it: the last two path parts, with
    characters unsafe in a path replaced by ``__``."""
    return re.sub(r"[\"<>:/\|\\?\*\[\]]+", "__", "/".join(model.split("/")[-2:]))


def _dumps(data: Any, indent: int | None = None) -> str:
    """JSON as lmms-eval writes it: non-ASCII kept, sets as lists, anything else as str."""

    def serializable(value: Any) -> Any:
        return list(value) if isinstance(value, set) else str(value)

    return json.dumps(data, indent=indent, default=serializable, ensure_ascii=False)


def _git(*args: str) -> str | None:
    here = Path(__file__).parent
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=5, cwd=here)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
