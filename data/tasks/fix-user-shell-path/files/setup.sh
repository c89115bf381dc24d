set -e
useradd -m -s /bin/bash dev
mkdir -p /opt/tools/bin
printf '#!/bin/sh\necho "mytool 2.3"\n' > /opt/tools/bin/mytool
printf '#!/bin/sh\necho "mytool 1.0 (obsolete)"\n' > /usr/local/bin/mytool
chmod 755 /opt/tools/bin/mytool /usr/local/bin/mytool
cat >> /home/dev/.bashrc <<'RC'

# tools
export PATH=/opt/tool/bin
alias la='ls -A'
RC
printf 'export EDITOR=nano\n' > /home/dev/.bash_profile
chown dev:dev /home/dev/.bash_profile
