"""``python -m serving``: the local OpenAI-compatible server (same flags as ``serving.server``)."""

import sys

from serving.server import main

if __name__ == "__main__":
    sys.exit(main())
