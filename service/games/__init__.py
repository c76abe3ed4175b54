"""The rules engines.  Pure Python: this package imports nothing else of ours."""
