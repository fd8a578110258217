"""multicalibration."""
