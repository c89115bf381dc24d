#!/bin/bash
: > /app/ready.flag
