#!/bin/bash
p=$(cat /tmp/lab/s3seal-$1.pid 2>/dev/null) || exit 0
kill $p 2>/dev/null; for i in $(seq 100); do kill -0 $p 2>/dev/null || exit 0; sleep 0.1; done; kill -9 $p
