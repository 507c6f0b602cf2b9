"""The task registry: one entry per benchmark, looked up by name."""

from __future__ import annotations

from evals.tasks import (
    charades,
    chartqapro,
    longvideobench,
    lvbench,
    mlvu,
    mmvu,
    needle,
    slidevqa,
    videomme,
    vqaonline,
)
from evals.tasks.base import Task

TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        needle.TASK,
        videomme.TASK,
        mlvu.TASK,
        longvideobench.TASK,
        lvbench.TASK,
        charades.TASK,
        mmvu.TASK,
        chartqapro.TASK,
        slidevqa.TASK,
        vqaonline.TASK,
    )
}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(sorted(TASKS))}") from None
