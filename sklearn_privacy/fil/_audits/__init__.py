"""FIL audits of fitted pipelines, one-vs-rest compositions and scikit-learn models (private)."""
