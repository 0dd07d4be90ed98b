"""sgf stage."""
