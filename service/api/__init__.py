"""HTTP blueprints."""
