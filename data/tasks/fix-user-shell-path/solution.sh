#!/bin/bash
set -e
H=/home/dev
sed -i '/^export PATH=\/opt\/tool\/bin$/d' $H/.bashrc
echo "alias ll='ls -alF'" >> $H/.bashrc
cat > $H/.bash_profile <<'P'
export EDITOR=nano
case ":$PATH:" in
  *:/opt/tools/bin:*) ;;
  *) export PATH="/opt/tools/bin:$PATH" ;;
esac
[ -f ~/.bashrc ] && . ~/.bashrc
P
sed -i '1i case ":$PATH:" in *:/opt/tools/bin:*) ;; *) export PATH="/opt/tools/bin:$PATH" ;; esac' $H/.bashrc
chown dev:dev $H/.bash_profile $H/.bashrc
