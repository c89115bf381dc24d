import hashlib


def hash_password(pw):
    return hashlib.md5(pw.encode()).hexdigest()


def verify(pw, stored):
    return hash_password(pw) == stored
