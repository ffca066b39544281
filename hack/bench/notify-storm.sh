#!/usr/bin/env bash
# Drill of issue 16's "an every-minute failing task for 10 minutes sends folded messages, not
# ten": runs test/integration/drills/notify-storm.test.ts (skipped in the suite) on the cluster of
# KUBECONFIG, or on a fresh local one as the integration tests do. Prints the messages received.
#   KUBECONFIG=... hack/bench/notify-storm.sh [MINUTES] [FOLD_MINUTES]
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$(hack/node.sh):$PATH"
export CRONSCALE_DRILL=notify-storm DRILL_MINUTES="${1:-10}" DRILL_FOLD="${2:-5}"
exec npx vitest run --project integration --testTimeout=$(((DRILL_MINUTES + 8) * 60000)) \
  test/integration/drills/notify-storm.test.ts
