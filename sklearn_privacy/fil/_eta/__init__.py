"""The eta engine: structured Fisher information loss of the fitted GLMs (private)."""
