"""RQ job functions and the worker entry point (``python -m workers``)."""
