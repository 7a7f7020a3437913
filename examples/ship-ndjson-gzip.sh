#!/bin/sh
# Ships a file of log entries, one JSON object per line (NDJSON), to logkeep
# gzip-compressed, with curl. Prints logkeep's answer: how many entries were
# accepted, and which lines were rejected and why.
#
#   LOGKEEP_URL=http://localhost:8080 LOGKEEP_KEY=slk_… ./examples/ship-ndjson-gzip.sh app.ndjson
set -eu
file="${1:?usage: ship-ndjson-gzip.sh FILE.ndjson}"
gzip -c "$file" | curl --fail-with-body --silent --show-error \
  "${LOGKEEP_URL:-http://localhost:8080}/v1/logs" \
  -H "Authorization: Bearer ${LOGKEEP_KEY:?set LOGKEEP_KEY to a project secret key}" \
  -H 'Content-Type: application/x-ndjson' \
  -H 'Content-Encoding: gzip' \
  --data-binary @-
echo
