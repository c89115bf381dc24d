export GIT_AUTHOR_NAME="Dev One" GIT_AUTHOR_EMAIL="dev1@example.com"
export GIT_COMMITTER_NAME="Dev One" GIT_COMMITTER_EMAIL="dev1@example.com"
N=0
commit() { N=$((N+1)); GIT_AUTHOR_DATE="2024-01-01T10:$(printf %02d $N):00Z" GIT_COMMITTER_DATE="2024-01-01T10:$(printf %02d $N):00Z" git commit -q "$@"; }
git config --global init.defaultBranch main
git config --global user.name "Dev One"; git config --global user.email "dev1@example.com"
mkdir -p /app/repo && cd /app/repo && git init -q
cat > pager.py <<'P'
def paginate(items, page, per_page=10):
    """Return the items of 1-based page number `page`."""
    start = (page - 1) * per_page
    return items[start:start + per_page - 1]
P
echo "1.0.0" > VERSION
git add .; commit -m "Initial pager"
git branch release-1.x
echo "def export_csv(rows):\n    return '\\n'.join(','.join(map(str, r)) for r in rows)" > export.py
git add .; commit -m "Add CSV export"
sed -i 's/per_page - 1\]/per_page]/' pager.py; git add .; commit -m "Fix off-by-one in paginate"
echo "2.0.0-dev" > VERSION; git add .; commit -m "Start 2.0 development"
printf 'def paginate_all(items, per_page=10):\n    return [items[i:i + per_page] for i in range(0, len(items), per_page)]\n' >> pager.py
git add .; commit -m "Add paginate_all"
git checkout -q release-1.x
echo "1.0.1" > VERSION; git add .; commit -m "Prepare 1.0.1"
git checkout -q main
