"""nets stage."""
