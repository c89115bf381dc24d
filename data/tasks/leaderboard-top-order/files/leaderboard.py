"""Game leaderboard."""


def top(scores, n):
    """Return the n best entries of scores (dict name -> points) as a list of (name, points).

    Best first: higher points first; equal points are ordered by name, alphabetically.
    If there are fewer than n players, return all of them.
    """
    return sorted(scores.items(), key=lambda kv: (kv[1], kv[0]))[:n]
