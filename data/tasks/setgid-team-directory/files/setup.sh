set -e
groupadd -g 3000 analytics
useradd -m -s /bin/bash -G analytics ann
useradd -m -s /bin/bash -G analytics ben
useradd -m -s /bin/bash eve
mkdir -p /srv/analytics/reports/2024 /srv/analytics/raw
echo "q1" > /srv/analytics/reports/2024/q1.csv
echo "notes" > /srv/analytics/notes.md
echo "dump" > /srv/analytics/raw/export.json
chown -R ann:ann /srv/analytics/reports /srv/analytics/notes.md
chown -R ben:ben /srv/analytics/raw
chmod 644 /srv/analytics/notes.md /srv/analytics/reports/2024/q1.csv /srv/analytics/raw/export.json
chmod 755 /srv/analytics /srv/analytics/reports /srv/analytics/reports/2024 /srv/analytics/raw
