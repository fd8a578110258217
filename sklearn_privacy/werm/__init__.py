"""werm."""
