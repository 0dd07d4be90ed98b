"""gtp stage."""
