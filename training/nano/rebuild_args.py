"""The command line of ``training.nano.rebuild``: what each flag sets, and its default."""

from __future__ import annotations

import argparse
from pathlib import Path

from training.nano import notes, train


def parser(description: str, shipped: Path) -> argparse.ArgumentParser:
    """The rebuild's flags; ``--ship`` copies the result to `shipped`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, required=True, help="Build folder (resumable).")
    parser.add_argument(
        "--data",
        type=Path,
        help="The data stage's folder (default: OUT/data): a stage that trains on from another "
        "reuses its videos and traces (refused when they were made for other questions).",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--videos", type=int, default=1200, help="Train videos to generate.")
    parser.add_argument(
        "--note-seeds",
        type=int,
        default=20000,
        help="Train-split plans (after the videos' seeds) that give note-to-answer rows.",
    )
    parser.add_argument(
        "--base",
        type=Path,
        default=None,
        help="A trained nano to start from (its tokenizer, extended by the whole tokens it "
        "lacks, and its weights): the roles stage (ROLES) in place of a tokenizer, the "
        "warm-ups and SFT from scratch.",
    )
    parser.add_argument("--sft-steps", type=int, default=train.SFTSchedule.steps)
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=None,
        help="SFT's peak learning rate (default: the schedule's, or ROLES' with --base).",
    )
    parser.add_argument(
        "--warmup-steps",
        type=int,
        nargs=2,
        metavar=("COPY", "VISION"),
        default=(train.SFTSchedule.copy_warmup_steps, train.SFTSchedule.vision_warmup_steps),
        help="Steps of the copy and the vision warm-up before SFT (training.nano.warmup).",
    )
    parser.add_argument(
        "--grpo-steps",
        type=int,
        default=50,
        help="Steps of each GRPO arm (0: none; the SFT checkpoint is the result).",
    )
    parser.add_argument(
        "--claim-weight",
        type=float,
        default=train.SFTSchedule.claim_weight,
        help="Weight of the verifier's claim target in SFT (training.nano.claims; 0: none).",
    )
    parser.add_argument(
        "--time-weight",
        type=float,
        default=train.SFTSchedule.time_weight,
        help="Weight of the verifier rows' frame-time target (training.nano.frame_times; 0: none).",
    )
    parser.add_argument(
        "--shares",
        type=float,
        nargs=3,
        metavar=("MAIN", "NOTES", "VERIFY"),
        default=None,
        help="Shares of main-agent, note-to-answer and verifier batches (the rest: "
        "sub-agent); default: the recipe's (ROLES with --base).",
    )
    parser.add_argument(
        "--polish-steps",
        type=int,
        default=0,
        help="After SFT, this many more SFT steps from its checkpoint (OUT/polish), on the "
        "same rows in the mix of --polish-shares, learning rate warmed up and decayed anew.",
    )
    parser.add_argument(
        "--polish-shares",
        type=float,
        nargs=3,
        metavar=("MAIN", "NOTES", "VERIFY"),
        default=None,
        help="The polish's shares of main-agent, note-to-answer and verifier batches.",
    )
    parser.add_argument(
        "--phrased",
        type=int,
        default=notes.PHRASED,
        help="Questions in everyday wording per plan's video (training.nano.phrasing).",
    )
    parser.add_argument(
        "--every-needle-grounded",
        action="store_true",
        help="Note rows ask a grounding question about every needle, not only the "
        "benchmark's one (training.nano.notes.note_rows).",
    )
    parser.add_argument(
        "--spaced-seconds",
        action="store_true",
        help="With --base: also give the base every whole second after a space as one token "
        "(training.nano.model.SPACED_SECONDS).",
    )
    parser.add_argument(
        "--sub-agent-base-spelling",
        action="store_true",
        help="With --spaced-seconds: the sub-agent's own notes keep the base's spelling of a "
        "spaced second (a space, then the number) while every prompt reads the new one "
        "(training.nano.spelling).",
    )
    parser.add_argument(
        "--second-looks",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="This share of the traces' sub-agent calls also gets a row at the frames between "
        "its own, as the verify gate's second look reads them (training.nano.second_look).",
    )
    parser.add_argument(
        "--off-topic",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="This share of the data stage's videos (run through the graph) and of the plans' "
        "note rows also get a question the video cannot answer, in the composed wordings of "
        "training.nano.off_topic.",
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--save-every", type=int, default=0, help="SFT step-N/ checkpoints.")
    parser.add_argument(
        "--resume-every",
        type=int,
        default=train.SFTSchedule.resume_every,
        help="Steps between SFT's resume points (a killed SFT goes on from the last one).",
    )
    parser.add_argument(
        "--stop-after", choices=("data", "init", "sft", "polish", "grpo"), default=None
    )
    parser.add_argument("--ship", action="store_true", help=f"Copy the result to {shipped}.")
    return parser
