#!/usr/bin/env bash
# Drill of issue 15's must-show at full length: a task every minute for 15 minutes with the
# recent window 5 keeps 5 TaskExecutions and all 15 runs in the archive with their output.
# Runs test/integration/drills/archive-window.test.ts (skipped in the suite) on the cluster of
# KUBECONFIG, or on a fresh local one as the integration tests do. Prints its figures.
#   KUBECONFIG=... hack/bench/archive-window.sh [MINUTES] [WINDOW]
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$(hack/node.sh):$PATH"
export CRONSCALE_DRILL=archive-window DRILL_MINUTES="${1:-15}" DRILL_WINDOW="${2:-5}"
exec npx vitest run --project integration --testTimeout=$(((DRILL_MINUTES + 8) * 60000)) \
  test/integration/drills/archive-window.test.ts
