"""marshmallow schemas: intents per game, HTTP requests and responses."""
