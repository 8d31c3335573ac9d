#!/usr/bin/env bash
# The fleet demo on a local lab (contract §13): drift → plan → install → drift clean → adopt
# (--promote: drift clean again) → audit verify, against three real controllers on 127.0.0.1. Run from the repository root after
# `npm ci && npm run build`. Leaves nothing running: the lab is taken down at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fleet() { node packages/cli/bin/run.js "$@"; }
if [[ -t 1 ]]; then step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }; else step() { printf '\n== %s\n' "$*"; }; fi
# Its own directory, not `fleet lab up`'s default: a lab the README's next steps start stays free.
lab=${FLEET_LAB_DIR:-.fleet-demo}
# A previous demo's lab (stopped or running) is cleared first: the demo starts from scratch.
fleet lab down --dir "$lab" >/dev/null 2>&1 || true
rm -rf "$lab"
trap 'fleet lab down --dir "$lab" >/dev/null 2>&1 || true' EXIT
# Keep the operator's own log of this demo inside the lab, not in the real ~/.local/state.
case $lab in /*) ;; *) lab=$PWD/$lab ;; esac
export XDG_STATE_HOME="$lab/operator-state"

step "fleet lab up --hosts 3: a repo, three controllers, their tokens"
eval "$(fleet lab up --hosts 3 --dir "$lab")"

step "fleet drift: nothing is installed yet (exit 1 means drift)"
fleet drift || echo "(exit $?)"

step "fleet config plan node-01 harness-policy: what an install would do, nothing written"
fleet config plan node-01 harness-policy

step "fleet config install node-01 harness-policy --confirm"
fleet config install node-01 harness-policy --confirm

step "fleet drift --host node-01 --domain harness-policy: clean"
fleet drift --host node-01 --domain harness-policy

step "someone edits node-01's CLAUDE.md by hand; drift calls it diverged"
echo "- node-01 only: keep the build cache on the fast disk" >>"$lab/nodes/node-01/home/.claude/CLAUDE.md"
fleet drift --host node-01 --domain harness-policy || echo "(exit $?)"

step "fleet config adopt node-01 ~/.claude/CLAUDE.md --promote: the repo admits what the host became"
# The other two hosts have no CLAUDE.md yet: promoting changes what they should hold, so say so.
fleet config adopt node-01 '~/.claude/CLAUDE.md' --promote --accept-drift-on node-02 \
  --accept-drift-on node-03 --message "adopt node-01's local rule"
git -C "$FLEET_REPO" log -1 --format='%h %s%n%n%(trailers)'

step "fleet drift --host node-01 --domain harness-policy: clean again, the loop closed"
fleet drift --host node-01 --domain harness-policy

step "fleet audit verify: every node's hash-chained audit log is intact"
fleet audit verify
