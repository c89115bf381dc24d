#!/bin/bash
set -e
groupadd -g 2100 devs
usermod -aG devs alice
usermod -aG devs carol
