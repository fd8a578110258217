"""Loaders for the real data sets bundled with the package."""
