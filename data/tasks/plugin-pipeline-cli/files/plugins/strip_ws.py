NAME = "strip"
PRIORITY = 10


def transform(text, options):
    return "\n".join(line.strip() for line in text.split("\n"))
