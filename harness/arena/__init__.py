"""Games between players: the referee, round-robin and adaptive tournaments,
Bradley-Terry ratings with intervals, SPRT matches and training-data generation.

Only the parent process writes results, so a killed tournament resumes from
its ``results.jsonl`` and plays only the games that are missing.
"""
