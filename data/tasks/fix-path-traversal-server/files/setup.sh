set -e
mkdir -p /app/public/docs/2024 /app/public/img /app/public_backup
printf 'welcome to the docs\n' > /app/public/index.txt
printf 'Q1 report: revenue up\n' > "/app/public/docs/2024/q1 report.txt"
printf 'notes..v2\n' > /app/public/docs/notes..v2.txt
python3 -c "open('/app/public/img/logo.bin','wb').write(bytes(range(256))*4)"
printf 'TOP-SECRET-7f3e9a\n' > /app/secret.txt
printf 'BACKUP-SECRET-a1b2\n' > /app/public_backup/keys.txt
ln -s /app/secret.txt /app/public/docs/secret-link.txt
ln -s ../../public_backup /app/public/img/backup
ln -s ../index.txt /app/public/docs/home.txt
