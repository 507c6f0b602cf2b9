"""SFT's resume point: everything a killed SFT needs to go on from its last saved step and end
bit-identical to a run that was never stopped.

The state (``resume.pt`` in SFT's output folder) holds the weights, the training-only heads,
AdamW's moments, the batch sampler's random state, the steps done, the seconds spent and the loss
window not yet logged. It is written atomically every ``SFTSchedule.resume_every`` steps and
removed once the final checkpoint is saved. A state written for another schedule or other
rows is refused with a message that says how to start over, not silently mixed in.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import torch

STATE = "resume.pt"
#: Schedule fields that do not change what SFT computes, so a resume may change them.
FREE = {"threads", "log_every", "save_every", "resume_every"}


class ResumeRefused(RuntimeError):
    """The saved state cannot be resumed: another SFT run's, or unreadable."""


def fingerprint(schedule, rows: int) -> dict:
    """What a state must agree on to be resumed: the schedule's training fields and the rows."""
    fields = {k: v for k, v in asdict(schedule).items() if k not in FREE}
    return json.loads(json.dumps({"schedule": fields, "rows": rows}))


def save(
    out: Path,
    *,
    step: int,
    model,
    heads,
    optimizer,
    sampler,
    elapsed: float,
    window: dict,
    identity: dict,
) -> Path:
    """Write the state after `step` steps (atomically: a kill mid-write keeps the last one)."""
    state = {
        "step": step,
        "identity": identity,
        "model": model.state_dict(),
        "heads": heads.state_dict(),
        "optimizer": optimizer.state_dict(),
        "sampler": sampler.rng.getstate(),
        "torch_rng": torch.get_rng_state(),
        "elapsed": elapsed,
        "window": window,
    }
    path, partial = out / STATE, out / (STATE + ".partial")
    torch.save(state, partial)
    os.replace(partial, path)
    return path


def load(out: Path, identity: dict) -> dict | None:
    """The saved state in `out`, or None when there is none; raises ResumeRefused when it was
    written for another schedule or other rows, or cannot be read."""
    path = out / STATE
    if not path.exists():
        return None
    try:
        state = torch.load(path, weights_only=False)
    except Exception as error:  # a truncated or foreign file: any unpickling error
        raise ResumeRefused(
            f"{path} cannot be read ({error}); delete it to start SFT over"
        ) from None
    if "heads" not in state:  # written before the heads were kept by name
        raise ResumeRefused(
            f"{path} was saved by an older version of this SFT; delete it to start SFT over"
        )
    if state["identity"] != identity:
        raise ResumeRefused(
            f"{path} was saved by an SFT run with other settings or rows "
            f"(saved {state['identity']}, now {identity}); delete it to start SFT over"
        )
    return state


def restore(state: dict, *, model, heads, optimizer, sampler) -> None:
    """Put the saved weights, moments and random states back in place."""
    model.load_state_dict(state["model"])
    heads.load_state_dict(state["heads"])
    optimizer.load_state_dict(state["optimizer"])
    sampler.rng.setstate(state["sampler"])
    torch.set_rng_state(state["torch_rng"])


def trim_log(log: Path, step: int) -> None:
    """Keep the log's header lines and its step lines up to `step`, so a resumed run does not
    repeat the lines a killed run wrote after its last saved state."""
    if not log.exists():
        return
    kept = [
        line for line in log.read_text().splitlines() if json.loads(line).get("step", 0) <= step
    ]
    log.write_text("".join(line + "\n" for line in kept))


def clear(out: Path) -> None:
    """Remove the state once SFT's final checkpoint is saved."""
    (out / STATE).unlink(missing_ok=True)
