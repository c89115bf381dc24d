#!/bin/bash
set -e
H=/app/git/site.git/hooks
cat > $H/pre-receive <<'SH'
#!/bin/bash
zero=0000000000000000000000000000000000000000
while read -r old new ref; do
    [ "$ref" = refs/heads/main ] || continue
    if [ "$new" = "$zero" ]; then echo "main cannot be deleted" >&2; exit 1; fi
    if [ "$old" != "$zero" ]; then
        if ! git merge-base --is-ancestor "$old" "$new"; then echo "non-fast-forward push to main rejected" >&2; exit 1; fi
        range="$old..$new"
    else
        range="$new"
    fi
    for c in $(git rev-list "$range"); do
        if ! git log -1 --format=%B "$c" | grep -q '^Signed-off-by: '; then
            echo "commit $c is not signed off" >&2; exit 1
        fi
        if git rev-parse -q --verify "$c^1" >/dev/null; then
            changed=$(git diff-tree -r --diff-filter=AM --name-only "$c^1" "$c")
        else
            changed=$(git ls-tree -r --name-only "$c")
        fi
        while IFS= read -r f; do
            [ -n "$f" ] || continue
            size=$(git cat-file -s "$c:$f" 2>/dev/null || echo 0)
            if [ "$size" -gt 50000 ]; then echo "file $f in $c is larger than 50000 bytes" >&2; exit 1; fi
        done <<< "$changed"
    done
done
exit 0
SH
cat > $H/post-receive <<'SH'
#!/bin/bash
zero=0000000000000000000000000000000000000000
WWW=/app/www
while read -r old new ref; do
    [ "$ref" = refs/heads/main ] && [ "$new" != "$zero" ] || continue
    mkdir -p "$WWW/releases"
    rel="$WWW/releases/$new"
    rm -rf "$rel"; mkdir -p "$rel"
    git archive "$new" | tar -x -C "$rel"
    if (cd "$rel" && unset GIT_DIR && make >/dev/null 2>&1); then
        ln -sfn "releases/$new" "$WWW/.current.tmp"
        mv -T "$WWW/.current.tmp" "$WWW/current"
        echo "$new ok" >> "$WWW/deploy.log"
        keep=$(grep ' ok$' "$WWW/deploy.log" | awk '{print $1}' | tac | awk '!seen[$0]++' | head -3)
        for d in "$WWW"/releases/*; do
            b=$(basename "$d")
            grep -qx "$b" <<< "$keep" || rm -rf "$d"
        done
    else
        rm -rf "$rel"
        echo "$new failed" >> "$WWW/deploy.log"
    fi
done
SH
chmod +x $H/pre-receive $H/post-receive
