"""The version of the package."""

__version__ = "0.3.0.dev0"
