"""``harness bench KIND``: every speed claim the project makes comes from a table here.

Each kind times alternatives side by side in one run (absolute timings drift
between machines and runs; ratios measured together do not), prints a
Markdown table and can save it as CSV and Markdown.
"""
