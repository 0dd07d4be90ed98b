"""Compute-frontier studies (``harness frontier``): every family at every size
trained to the same training FLOPs at each savepoint, scored on the same
held-out positions, then fitted and reported by :mod:`harness.report.frontier`."""
