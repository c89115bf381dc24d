import os

DOCS = "/app/webapp/docs"


def read_doc(name):
    """Bytes of the document `name` in DOCS, or None if it doesn't exist."""
    path = os.path.join(DOCS, name)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()
