"""Fisher information loss with respect to a pipeline's raw inputs (feature-map derivatives)."""
