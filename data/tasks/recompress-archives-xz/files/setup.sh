set -e
A=/app/archive; mkdir -p $A; W=$(mktemp -d)
for n in logs-2024-01 logs-2024-02 site-backup db-dump; do
  mkdir -p $W/$n/sub
  for i in 1 2 3; do seq -f "$n file $i line %g" 1 $((i * 200)) > $W/$n/part$i.txt; done
  echo "$n nested" > $W/$n/sub/nested.txt
  tar -C $W -czf $A/$n.tar.gz $n
done
# corrupt two archives: truncated, and garbage in the middle
head -c 600 $A/site-backup.tar.gz > $A/site-backup.tmp && mv $A/site-backup.tmp $A/site-backup.tar.gz
python3 -c "
p='$A/db-dump.tar.gz'; b=bytearray(open(p,'rb').read()); b[200:260]=b'\x00'*60; open(p,'wb').write(bytes(b))"
rm -rf $W
