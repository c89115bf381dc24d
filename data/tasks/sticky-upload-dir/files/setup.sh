chmod 0777 /app/public/uploads
chmod 0644 /app/public/uploads/*.txt
