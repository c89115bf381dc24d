set -e
mkdir -p /app/keys /app/inbox
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out /app/keys/me.pem 2>/dev/null
openssl pkey -in /app/keys/me.pem -pubout -out /app/keys/me.pub.pem
cd /tmp
printf 'Meet at the usual place at 21:00.\nBring the blue folder.\nPassphrase: orchid-lantern-93\n' > msg.txt
python3 -c "import os; open('k.bin','wb').write(bytes.fromhex('00112233445566778899aabbccddeeff' * 2)); open('iv.bin','wb').write(bytes.fromhex('0f0e0d0c0b0a09080706050403020100'))"
openssl pkeyutl -encrypt -pubin -inkey /app/keys/me.pub.pem -pkeyopt rsa_padding_mode:oaep -pkeyopt rsa_oaep_md:sha256 -pkeyopt rsa_mgf1_md:sha256 -in k.bin -out ek.bin
openssl enc -aes-256-cbc -K 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff -iv 0f0e0d0c0b0a09080706050403020100 -in msg.txt -out ct.bin
python3 -c "
import struct
ek = open('ek.bin','rb').read()
open('/app/inbox/message.sealed','wb').write(struct.pack('>I', len(ek)) + ek + open('iv.bin','rb').read() + open('ct.bin','rb').read())"
rm -f msg.txt k.bin iv.bin ek.bin ct.bin
