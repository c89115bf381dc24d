NAME = "upper"
PRIORITY = 50


def transform(text, options):
    return text.upper()
