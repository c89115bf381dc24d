"""Runtime configuration read from environment variables."""
import os


def get_port():
    """Port to listen on: the integer in $APP_PORT, or 8080 when APP_PORT is unset or empty."""
    return int(os.environ["APP_PORT"])
