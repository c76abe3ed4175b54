"""Developer tools run from the repository root (``python -m scripts.<name>``): the
benchmark, the demos and the soak.  Not part of the installed package."""
