#!/bin/bash
set -e
cd /app/certs
{
echo "file,common_name,issuer_cn,key_bits,self_signed,san_dns,expired"
for f in $(ls *.pem | LC_ALL=C sort); do
  subj=$(openssl x509 -in $f -noout -subject -nameopt multiline | sed -n 's/^ *commonName *= *//p')
  iss=$(openssl x509 -in $f -noout -issuer -nameopt multiline | sed -n 's/^ *commonName *= *//p')
  bits=$(openssl x509 -in $f -noout -text | sed -n 's/.*Public-Key: (\([0-9]*\) bit).*/\1/p')
  s1=$(openssl x509 -in $f -noout -subject -nameopt RFC2253); i1=$(openssl x509 -in $f -noout -issuer -nameopt RFC2253)
  [ "${s1#subject=}" = "${i1#issuer=}" ] && ss=yes || ss=no
  san=$(openssl x509 -in $f -noout -ext subjectAltName 2>/dev/null | tail -n +2 | tr ',' '\n' | sed -n 's/^ *DNS://p' | paste -sd';')
  end=$(openssl x509 -in $f -noout -enddate | cut -d= -f2)
  if [ $(date -u -d "$end" +%s) -lt $(date -u -d "2025-01-01 00:00:00" +%s) ]; then ex=yes; else ex=no; fi
  echo "$f,$subj,$iss,$bits,$ss,$san,$ex"
done
} > /app/inventory.csv
