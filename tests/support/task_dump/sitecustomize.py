"""Loaded by a test's child process (this folder on its PYTHONPATH): on SIGUSR1 it prints the
stack of every task of the running event loop to stderr.

faulthandler shows threads only, and a child that hangs with its loop idle shows nothing but
``run_until_complete``; the tasks show which await it waits on."""

import asyncio
import signal
import sys


def _print_tasks(_signum, _frame) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        print("task dump: no running event loop", file=sys.stderr, flush=True)
        return
    tasks = asyncio.all_tasks(loop)
    print(f"task dump: {len(tasks)} tasks", file=sys.stderr)
    for task in tasks:
        print(f"--- {task!r} cancelling={task.cancelling()}", file=sys.stderr)
        task.print_stack(limit=40, file=sys.stderr)
    sys.stderr.flush()


signal.signal(signal.SIGUSR1, _print_tasks)
