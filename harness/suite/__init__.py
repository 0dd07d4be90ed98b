"""The whole study: one config runs data, training, tournament and report."""
