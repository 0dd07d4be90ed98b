"""Compute-frontier studies (``harness frontier``): every family at every size
trained to the same training FLOPs at each savepoint, scored on the same
held-out positions (or, ``kind = "selfplay"``, learning from zero to the same
training + self-play FLOPs, rated in one pooled Elo rating), then fitted and
reported by :mod:`harness.report.frontier`."""
