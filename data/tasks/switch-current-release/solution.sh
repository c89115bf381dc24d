#!/bin/bash
cd /app && ln -sfn releases/v1.10.0 current
