"""Deprecated entry point: ``python -m training.trl_grpo`` is ``python -m training.trl.grpo``."""

import sys

if __name__ == "__main__":
    print("training.trl_grpo is deprecated: use python -m training.trl.grpo", file=sys.stderr)
    from training.trl.grpo import main

    raise SystemExit(main())
