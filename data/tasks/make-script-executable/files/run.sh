#!/bin/bash
echo "deploy ok"
