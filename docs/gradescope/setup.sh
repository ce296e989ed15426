#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu, /autograder/source
# holding this folder's files and the tutor's repository as attention-tutor/). It installs Python, a
# torch and the tutor in /autograder/venv; nothing is fetched when a submission is graded.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-pip
python3 -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install --quiet torch==2.13.0
"$ROOT/venv/bin/pip" install --quiet "$ROOT/source/attention-tutor"
