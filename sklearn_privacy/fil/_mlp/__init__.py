"""FIL audit of scikit-learn's multi-layer perceptrons and their exact derivatives (private)."""
