"""Supervised training: a checked config, budgeted epochs with checkpoints and
resume, validation with intervals over games, and the comparison of runs.
"""
