#!/bin/bash
set -e
pip install --no-index --no-build-isolation /app/vendor/tinyhash-src
