"""go-harness: which network architecture learns Go best per unit of compute."""

__version__ = "0.1.0"
