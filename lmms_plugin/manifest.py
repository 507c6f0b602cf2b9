"""The `lmms_eval.models` entry point: lmms-eval's registry learns `paravt` from here."""

from __future__ import annotations

MODEL_ID = "paravt"


def manifest():
    """The ModelManifest lmms-eval's registry loads (lmms_eval.models.registry_v2): a chat
    class, and a simple one for --force_simple. lmms-eval is imported only when it asks."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(
        model_id=MODEL_ID,
        chat_class_path="lmms_plugin.model.ParaVT",
        simple_class_path="lmms_plugin.model.ParaVTSimple",
    )
