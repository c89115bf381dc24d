"""URL slugs for blog post titles."""


def slugify(text, max_length=None):
    """Turn a title into a URL slug.

    Rules:
    - lowercase;
    - accented letters become their plain ASCII letter ("Crème" -> "creme");
      other non-ASCII characters are dropped;
    - every run of characters that are not a-z or 0-9 becomes a single "-";
    - no leading or trailing "-";
    - if max_length is given, the slug is at most max_length characters: cut at
      the last "-" that keeps it within the limit so no word is split; only if
      the first word alone is longer than max_length is it cut mid-word;
    - if nothing is left, return "n-a".

    Examples:
        slugify("Hello, World!") == "hello-world"
        slugify("Crème Brûlée recipe") == "creme-brulee-recipe"
        slugify("one two three", max_length=9) == "one-two"
    """
    raise NotImplementedError
