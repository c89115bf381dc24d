#!/bin/bash
ln -sfn /usr/share/zoneinfo/America/Chicago /etc/localtime
echo America/Chicago > /etc/timezone
