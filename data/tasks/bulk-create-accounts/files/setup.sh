set -e
groupadd -g 999 docker
useradd -m -u 1100 -s /bin/bash olduser
usermod -aG docker olduser
