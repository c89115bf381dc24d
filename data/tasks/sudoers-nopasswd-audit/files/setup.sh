set -e
mkdir -p /app/audit/sudoers.d
cat > /app/audit/sudoers <<'S'
Defaults env_reset
Defaults secure_path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

User_Alias OPS = olivia, oscar
User_Alias DBA = dana

root    ALL=(ALL:ALL) ALL
%sudo   ALL=(ALL:ALL) ALL
OPS     ALL=(ALL) NOPASSWD: ALL
DBA     ALL=(postgres) NOPASSWD: ALL
#mallory ALL=(ALL) NOPASSWD: ALL
carl    ALL=(ALL) NOPASSWD: /usr/bin/systemctl restart web
Defaults:ben !authenticate
ben     ALL=(root) ALL

#includedir /app/audit/sudoers.d
S
cat > /app/audit/sudoers.d/10-admins <<'S'
%wheel ALL=(ALL) NOPASSWD: ALL
erin ALL=NOPASSWD: \
     ALL
S
cat > /app/audit/sudoers.d/20-deploy <<'S'
deploy ALL=(root) NOPASSWD: /usr/bin/rsync, /usr/bin/systemctl
frank ALL=(ALL:ALL) PASSWD: ALL
S
cat > /app/audit/sudoers.d/30-old~ <<'S'
gina ALL=(ALL) NOPASSWD: ALL
S
cat > /app/audit/sudoers.d/40-temp.disabled <<'S'
hank ALL=(ALL) NOPASSWD: ALL
S
cat > /app/audit/group <<'S'
root:x:0:
sudo:x:27:alice,frank
wheel:x:10:walt,wendy
postgres:x:120:dana
S
