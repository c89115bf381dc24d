#!/bin/bash
echo "umask 027" > /etc/profile.d/umask.sh
