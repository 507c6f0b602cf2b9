"""Scoring primitives shared by evaluation scorers (evals/) and RL rewards (training/).

Pure, stdlib-only functions: answer extraction (:mod:`.extract`), multiple-choice letters
with named profiles (:mod:`.letters`), temporal intervals (:mod:`.intervals`) and
open-ended text metrics (:mod:`.text`).
"""
