"""Tag helpers for the notes app."""


def add_tag(tag, tags=[]):
    """Return a list with `tag` appended to `tags` (a new list when `tags` is not given).

    Tags are lowercased; a tag that is already present is not added twice.
    """
    tag = tag.lower()
    if tag not in tags:
        tags.append(tag)
    return tags
