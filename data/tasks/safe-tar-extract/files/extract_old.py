import sys
import tarfile

# INSECURE: do not use
with tarfile.open(sys.argv[1]) as t:
    t.extractall(sys.argv[2])
