set -e
mkdir -p /app/certs /tmp/ca && cd /tmp/ca
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj "/O=Acme/CN=Acme Internal CA" 2>/dev/null
leaf() { # name cn bits days san start end
  openssl req -newkey rsa:$3 -nodes -keyout $1.key -out $1.csr -subj "/O=Acme/CN=$2" 2>/dev/null
  ext=""; if [ -n "$5" ]; then printf 'subjectAltName=%s\n' "$5" > $1.ext; ext="-extfile $1.ext"; fi
  openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out /app/certs/$1.pem -days $4 $ext 2>/dev/null
}
leaf api api.acme.test 2048 400 "DNS:api.acme.test,DNS:api-v2.acme.test,IP:10.0.0.7"
leaf www www.acme.test 3072 800 "DNS:www.acme.test,DNS:acme.test"
leaf mail mail.acme.test 2048 200 ""
# expired cert via openssl ca with explicit dates
mkdir -p db && : > db/index.txt && echo 1000 > db/serial
cat > ca.cnf <<'C'
[ca]
default_ca = myca
[myca]
dir = /tmp/ca
database = /tmp/ca/db/index.txt
serial = /tmp/ca/db/serial
new_certs_dir = /tmp/ca/db
default_md = sha256
policy = pol
copy_extensions = copy
[pol]
commonName = supplied
organizationName = optional
C
openssl req -newkey rsa:2048 -nodes -keyout old.key -out old.csr -subj "/O=Acme/CN=legacy.acme.test" -addext "subjectAltName=DNS:legacy.acme.test" 2>/dev/null
openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in old.csr -out /tmp/ca/old.pem -startdate 20220101000000Z -enddate 20231231000000Z 2>/dev/null
openssl x509 -in /tmp/ca/old.pem -out /app/certs/legacy.pem
openssl req -x509 -newkey rsa:4096 -nodes -keyout self.key -out /app/certs/dev-selfsigned.pem -days 30 -subj "/CN=dev.local" -addext "subjectAltName=DNS:dev.local,DNS:localhost" 2>/dev/null
cp ca.pem /app/certs/acme-ca.pem
cd / && rm -rf /tmp/ca
