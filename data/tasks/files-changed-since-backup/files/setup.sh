set -e
D=/app/data
mkdir -p $D/projects/alpha $D/projects/beta/docs $D/mail $D/empty-new
touch -d "2024-05-01 12:00:00" $D/.last_backup
for f in projects/alpha/main.c projects/alpha/README mail/inbox.mbox projects/beta/docs/old.txt notes.txt; do
  echo "old $f" > $D/$f; touch -d "2024-04-20 08:00:00" $D/$f; done
for f in projects/alpha/util.c projects/beta/docs/spec.md mail/sent.mbox todo.txt; do
  echo "new $f" > $D/$f; touch -d "2024-05-03 09:30:00" $D/$f; done
echo "edited" > $D/.hidden-config; touch -d "2024-05-02 10:00:00" $D/.hidden-config
echo x > $D/projects/beta/build.log; touch -d "2024-05-01 11:59:59" $D/projects/beta/build.log
touch -d "2024-05-05 00:00:00" $D/empty-new $D/projects/alpha
