"""players stage."""
