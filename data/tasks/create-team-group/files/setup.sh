set -e
groupadd -g 2000 legacy
for u in alice bob carol; do useradd -m -s /bin/bash $u; done
usermod -aG legacy bob
