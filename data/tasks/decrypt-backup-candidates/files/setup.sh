set -e
mkdir -p /app/vault /tmp/b/etc/app /tmp/b/data
cd /tmp/b
printf 'db_host=10.1.2.3\ndb_name=orders\n' > etc/app/app.conf
python3 -c "
import csv
w = csv.writer(open('data/customers.csv', 'w', newline=''))
w.writerow(['id', 'name', 'balance'])
for i in range(1, 51): w.writerow([i, f'customer{i:03d}', i * 37 % 1000])
"
printf 'restore me\n' > 'data/notes with space.txt'
tar -cf /tmp/backup.tar etc data
cat > /app/vault/candidates.txt <<'P'
Winter2023!
admin123
S3cure#Backup
correct horse battery
Tr0ub4dor&3
backup-2024
changeme
P
openssl enc -aes-256-cbc -pbkdf2 -iter 100000 -salt -in /tmp/backup.tar -out /app/vault/backup.tar.enc -pass 'pass:Tr0ub4dor&3'
rm -rf /tmp/b /tmp/backup.tar
