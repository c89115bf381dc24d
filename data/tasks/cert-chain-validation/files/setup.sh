set -e
mkdir -p /app/trust /app/incoming /tmp/pki && cd /tmp/pki
cat > ca.ext <<'X'
basicConstraints=critical,CA:TRUE
keyUsage=critical,keyCertSign,cRLSign
X
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1.key 2>/dev/null; }
csr() { openssl req -new -key $1.key -subj "$2" -out $1.csr 2>/dev/null; }
# name subj signer ext [days]
sign() { openssl x509 -req -in $1.csr -CA $3.pem -CAkey $3.key -CAcreateserial -out $1.pem -days ${5:-3650} -extfile $4 2>/dev/null; }
leafext() { printf 'basicConstraints=CA:FALSE\nsubjectAltName=%s\n' "$2" > $1.ext; }
key root; openssl req -x509 -new -key root.key -subj "/O=Acme/CN=Acme Root CA" -days 3650 -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out root.pem 2>/dev/null
key int1; csr int1 "/O=Acme/CN=Acme Issuing CA 1"; sign int1 x root ca.ext 1825
key int2; csr int2 "/O=Acme/CN=Acme Issuing CA 2"; sign int2 x root ca.ext 1825
key rogue; openssl req -x509 -new -key rogue.key -subj "/O=Acme/CN=Acme Root CA" -days 3650 -addext "basicConstraints=critical,CA:TRUE" -out rogue.pem 2>/dev/null
cp root.pem /app/trust/root.pem; cp int1.pem /app/trust/intermediates.pem
mk() { key $1; csr $1 "/O=Acme/CN=$2"; leafext $1 "$3"; sign $1 x $4 $1.ext ${5:-3650}; }
mk api api.acme.test "DNS:api.acme.test" int1;                cp api.pem /app/incoming/api.pem
mk web www.acme.test "DNS:*.acme.test,DNS:acme.test" int1;    cp web.pem /app/incoming/web.pem
mk pay pay.acme.test "DNS:pay.acme.test" int2;                cat pay.pem int2.pem > /app/incoming/pay.pem
mk pay2 pay.acme.test "DNS:pay.acme.test" int2;               cp pay2.pem /app/incoming/checkout.pem
mk spoof api.acme.test "DNS:api.acme.test" rogue;             cat spoof.pem rogue.pem > /app/incoming/login.pem
openssl req -x509 -new -key api.key -subj "/O=Acme/CN=self.acme.test" -days 3650 -addext "subjectAltName=DNS:self.acme.test" -out /app/incoming/metrics.pem 2>/dev/null
mk deep a.b.acme.test "DNS:*.acme.test" int1;                 cp deep.pem /app/incoming/static.pem
mk db db.acme.test "DNS:db.acme.test" int1;                   cp db.pem /app/incoming/db.pem
# expired leaf issued by int1
mkdir -p db_ca && : > db_ca/index.txt && echo 1000 > db_ca/serial
cat > ca.cnf <<'C'
[ca]
default_ca = myca
[myca]
database = /tmp/pki/db_ca/index.txt
serial = /tmp/pki/db_ca/serial
new_certs_dir = /tmp/pki/db_ca
default_md = sha256
policy = pol
copy_extensions = copy
[pol]
commonName = supplied
organizationName = optional
C
key old; openssl req -new -key old.key -subj "/O=Acme/CN=old.acme.test" -addext "subjectAltName=DNS:old.acme.test" -out old.csr 2>/dev/null
openssl ca -batch -config ca.cnf -cert int1.pem -keyfile int1.key -in old.csr -out old.pem -startdate 20210101000000Z -enddate 20220101000000Z 2>/dev/null
openssl x509 -in old.pem -out /app/incoming/mail.pem
cat > /app/incoming/expected_hosts.txt <<'H'
api.pem api.acme.test
web.pem shop.acme.test
pay.pem pay.acme.test
checkout.pem pay.acme.test
login.pem api.acme.test
metrics.pem self.acme.test
static.pem a.b.acme.test
db.pem db2.acme.test
mail.pem old.acme.test
H
cd / && rm -rf /tmp/pki
