#!/bin/bash
chmod 600 /app/secrets.env
