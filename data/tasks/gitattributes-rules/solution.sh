#!/bin/bash
set -e
cd /app/repo
cat > .gitattributes <<'A'
*.png binary
*.bin binary
*.sh text eol=lf
*.bat text eol=crlf
A
git add .gitattributes
git commit -qm "Add .gitattributes"
