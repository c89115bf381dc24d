#!/bin/bash
set -e
cd /app/repo
git checkout -q main
mixed=$(git log --format=%H --grep='^Add config loader and fix README typo$' main)
tip=$(git rev-parse main)
git checkout -q -b tmp-split "$mixed~1"
git checkout "$mixed" -- README.md
git commit -q -m "Fix README typo"
git checkout "$mixed" -- config.py
git commit -q -m "Add config loader"
git cherry-pick "$mixed..$tip" >/dev/null
git checkout -q -B main tmp-split
git branch -q -D tmp-split
