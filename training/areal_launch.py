"""Deprecated entry point: ``python -m training.areal_launch`` is now
``python -m training.areal.launch``."""

import sys

if __name__ == "__main__":
    print(
        "training.areal_launch is deprecated: use python -m training.areal.launch", file=sys.stderr
    )
    from training.areal.launch import main

    main()
