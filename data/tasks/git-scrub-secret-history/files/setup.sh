set -e
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.com" GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.com"
n=0
commit() { n=$((n+1)); d="2024-03-$(printf %02d $n)T09:00:00+0000"; GIT_AUTHOR_DATE=$d GIT_COMMITTER_DATE=$d git commit -q -m "$1"; }
SECRET=AKIAZ7QW3RT5YU2IOP9X
mkdir -p /app/webapp && cd /app/webapp && git init -q -b main
mkdir -p config app
printf 'DEBUG = False\nREGION = "eu-west-1"\n' > config/settings.py
printf 'def handler(event):\n    return {"ok": True}\n' > app/handler.py
printf '# webapp\n' > README.md
git add . && commit "Initial import"
printf 'DEBUG = False\nREGION = "eu-west-1"\nAWS_ACCESS_KEY_ID = "%s"\n' $SECRET > config/settings.py
git add . && commit "Configure S3 uploads"
printf 'import boto3  # uses key %s from settings\n\ndef upload(path):\n    return path\n' $SECRET > app/upload.py
git add . && commit "Add upload helper"
git tag -a v1.0 -m "Release 1.0"
git checkout -q -b release/1.x
printf '# webapp\n\nRelease branch 1.x\n' > README.md && git add . && commit "Start 1.x maintenance"
printf 'def handler(event):\n    return {"ok": True, "v": 1}\n' > app/handler.py && git add . && commit "Hotfix handler"
git checkout -q main
printf 'DEBUG = False\nREGION = "eu-west-1"\nAWS_ACCESS_KEY_ID = os.environ["AWS_ACCESS_KEY_ID"]\n' > config/settings.py
sed -i "s/  # uses key $SECRET from settings//" app/upload.py
git add . && commit "Read AWS key from the environment"
printf 'def handler(event):\n    return {"ok": True, "items": []}\n' > app/handler.py && git add . && commit "Return items"
printf '# webapp\n\nDeploy with make deploy.\n' > README.md && git add . && commit "Document deploy"
git gc -q
