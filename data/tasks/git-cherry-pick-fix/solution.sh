#!/bin/bash
set -e
cd /app/repo
c=$(git log main --format=%H --grep='^Fix off-by-one in paginate$')
git checkout -q release-1.x
git cherry-pick "$c" >/dev/null
git checkout -q main
