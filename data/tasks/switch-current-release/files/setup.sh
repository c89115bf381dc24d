for v in 1.2.0 1.3.0 1.9.4 1.10.0; do
  mkdir -p /app/releases/v$v
  echo "$v" > /app/releases/v$v/VERSION
  echo "print('app $v')" > /app/releases/v$v/app.py
done
cd /app && ln -s releases/v1.2.0 current
