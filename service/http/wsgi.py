"""gunicorn entry point: ``gunicorn service.http.wsgi:app``."""

from service.config import Settings
from service.http.app import create_app
from service.logs import configure_logging

_settings = Settings.from_env()
configure_logging(_settings.log_level)
app = create_app(_settings)
