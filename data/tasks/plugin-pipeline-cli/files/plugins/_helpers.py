# private helper module: not a plugin (name starts with an underscore)
def noop(x):
    return x
