#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (/autograder/source holding this
# folder's files and the tutor's repository as attention-tutor/). It installs Python, a CPU torch and the
# tutor in /autograder/venv; nothing is fetched when a submission is graded.
# Gradescope's newest base image is Ubuntu 22.04, whose own python3 is 3.10 and the tutor needs 3.11: the
# deadsnakes PPA's python3.11 is an apt package in /usr/bin, so the venv made from it is there at grade
# time, offline. torch comes from PyTorch's CPU index (PyPI's wheel pulls the CUDA stack, gigabytes).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON=python3.11
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends software-properties-common gnupg
add-apt-repository -y ppa:deadsnakes/ppa
apt-get update
apt-get install -y --no-install-recommends "$PYTHON" "$PYTHON-venv"
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install --quiet torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
"$ROOT/venv/bin/pip" install --quiet "$ROOT/source/attention-tutor"
