set -e
useradd -m -s /bin/bash kim; useradd -m -s /bin/bash lee
for u in kim lee; do
  mkdir -p /home/$u/.ssh
  echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI$u $u@laptop" > /home/$u/.ssh/authorized_keys
done
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nlee-secret\n-----END OPENSSH PRIVATE KEY-----\n' > /home/lee/.ssh/id_ed25519
echo "ssh-ed25519 AAAAC3leepub lee@server" > /home/lee/.ssh/id_ed25519.pub
echo "github.com ssh-ed25519 AAAAhost" > /home/lee/.ssh/known_hosts
chmod 777 /home/kim; chown root:root /home/kim/.ssh; chmod 755 /home/kim/.ssh; chmod 664 /home/kim/.ssh/authorized_keys
chown kim /home/kim/.ssh/authorized_keys
chown -R lee:lee /home/lee/.ssh; chmod 775 /home/lee/.ssh
chown kim:kim /home/lee/.ssh/authorized_keys; chmod 644 /home/lee/.ssh/authorized_keys
chmod 644 /home/lee/.ssh/id_ed25519 /home/lee/.ssh/id_ed25519.pub /home/lee/.ssh/known_hosts
chmod 770 /home/lee
