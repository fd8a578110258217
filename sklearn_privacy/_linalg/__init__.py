"""The numerical layer: batched eigen-solvers and secular equations (private)."""
