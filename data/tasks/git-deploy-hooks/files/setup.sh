export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/git /app/www
git init -q --bare /app/git/site.git
w=$(mktemp -d) && cd $w && git init -q
mkdir src
printf '# Home\nWelcome to the site.\n' > src/index.md
printf '# About\nWe make things.\n' > src/about.md
cat > build.sh <<'SH'
#!/bin/sh
# build.sh SRC.md > OUT.html : tiny markdown-ish converter
sed -e 's|^# \(.*\)$|<h1>\1</h1>|' -e 's|^\([^<].*\)$|<p>\1</p>|' "$1"
SH
chmod +x build.sh
cat > Makefile <<'MK'
PAGES = $(patsubst src/%.md,public/%.html,$(wildcard src/*.md))
all: $(PAGES)
public/%.html: src/%.md build.sh
	@mkdir -p public
	./build.sh $< > $@
MK
git add .; commit -q -s -m "Initial site"
git push -q /app/git/site.git HEAD:refs/heads/main
cd / && rm -rf $w
git --git-dir=/app/git/site.git symbolic-ref HEAD refs/heads/main
