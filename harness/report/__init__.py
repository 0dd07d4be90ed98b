"""Figures and the sentences of Findings: training curves, position diagrams and
the statistical wording (a difference is claimed only where its test says so).
The suite's document itself is assembled in :mod:`harness.suite.document`.
"""
