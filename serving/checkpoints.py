"""Where the shipped checkpoint lives: paravt-nano, the default model of the local server."""

from __future__ import annotations

from pathlib import Path

#: paravt-nano, a ~3M-parameter Qwen3-VL trained on the needle benchmark (Hugging Face layout).
NANO_DIR = Path(__file__).resolve().parents[1] / "assets" / "paravt-nano"
#: The checkpoint the shipped nano's roles stage started from (``make nano``'s first stage),
#: kept so that stage can be rerun alone; nothing serves it by default.
NANO_BASE_DIR = NANO_DIR.with_name("paravt-nano-base")
REQUIRED = ("model.safetensors", "config.json")


def default_checkpoint(folder: Path = NANO_DIR) -> Path | None:
    """`folder` when it holds a loadable checkpoint (weights and config), else None.

    >>> default_checkpoint(Path("/nonexistent")) is None
    True
    """
    return folder if all((folder / name).is_file() for name in REQUIRED) else None
