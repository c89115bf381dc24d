#!/bin/bash
set -e
cd /app/incoming
tmp=$(mktemp -d)
echo "file,status" > /app/cert_report.csv
for f in $(ls *.pem | LC_ALL=C sort); do
  host=$(awk -v f="$f" '$1==f {print $2}' expected_hosts.txt)
  # split file: leaf + extras
  awk -v d="$tmp" '/BEGIN CERT/{n++} {print > (d "/c" n ".pem")}' "$f"
  openssl x509 -in $tmp/c1.pem -out $tmp/leaf.pem
  cat /app/trust/intermediates.pem > $tmp/untrusted.pem
  for x in $tmp/c[2-9].pem; do [ -e "$x" ] && cat "$x" >> $tmp/untrusted.pem; done
  st=ok
  if ! openssl verify -no_check_time -CAfile /app/trust/root.pem -untrusted $tmp/untrusted.pem $tmp/leaf.pem >/dev/null 2>&1; then st=untrusted
  elif ! openssl verify -CAfile /app/trust/root.pem -untrusted $tmp/untrusted.pem $tmp/leaf.pem >/dev/null 2>&1; then st=expired
  elif ! openssl verify -CAfile /app/trust/root.pem -untrusted $tmp/untrusted.pem -verify_hostname "$host" $tmp/leaf.pem >/dev/null 2>&1; then st=hostname_mismatch
  fi
  echo "$f,$st" >> /app/cert_report.csv
  rm -f $tmp/*.pem
done
