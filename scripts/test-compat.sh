#!/usr/bin/env bash
# Compatibility run against the LOWEST peer the package declares:
# @mastra/core 1.68.0 (peerDependencies: >=1.68.0 <2.0.0) with @mastra/libsql
# 1.23.1 (the newest libsql whose peer range accepts 1.68), installed in a
# scratch copy of the repository (the main node_modules and package-lock.json,
# pinned at 1.71.0, are never touched). Override with PUSHARY_COMPAT_CORE /
# PUSHARY_COMPAT_LIBSQL to probe other releases.
# Every older release was tried with the newest libsql it accepts; left out:
# - 1.59-1.64: the workflow option `autoRestartActiveRuns` does not exist, so
#   Mastra's boot-time restart re-ran a protected step (recovery tests).
# - 1.65.0 (libsql 1.22.5), 1.66.0 and 1.67.0 (libsql 1.23.0): a tool resumed
#   by resumeGenerate/resumeStream gets its resumeData but not its
#   suspendPayload (Mastra adds it in 1.68), so the deferred question tool
#   cannot tell its own framework resume from resume data a model produced and
#   fails closed by asking again (agents/mastra-mechanisms "is resumed with
#   the typed answer through resumegenerate/resumestream",
#   agents/deferred-review "resumes the deferred question tool with a select
#   answer of yes as data"; durable-agent's deferred question review likewise).
#
# The subset covers what depends on Mastra's runtime: workflows, resume,
# foreach, batch, recovery, the dispatcher and callback route, agent reviews,
# the approval step and the public API.
set -euo pipefail
cd "$(dirname "$0")/.."

CORE_VERSION="${PUSHARY_COMPAT_CORE:-1.68.0}"
LIBSQL_VERSION="${PUSHARY_COMPAT_LIBSQL:-1.23.1}"
SUBSET=(test/workflows test/agents test/steps test/types test/architecture/lazy-load.test.ts)
# PUSHARY_COMPAT_SUBSET (space-separated paths) narrows the run while probing
# a release, e.g. PUSHARY_COMPAT_SUBSET=test/agents; the floor must pass the
# whole subset above.
if [[ -n "${PUSHARY_COMPAT_SUBSET:-}" ]]; then
  read -r -a SUBSET <<<"$PUSHARY_COMPAT_SUBSET"
fi
# The 1,000-item scale run proves nothing about compatibility that the
# 100-item run in the same file does not; the main suites keep running it.
NOT_SCALE='^(?!.*1,000 items)'

scratch="$(mktemp -d "${TMPDIR:-/tmp}/pushary-compat-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
tar -C . --exclude=./node_modules --exclude=./dist --exclude=./.git --exclude=./bench/results -cf - . |
  tar -C "$scratch" -xf -
cd "$scratch"

echo "==> Install (scratch copy: $scratch)"
npm ci --no-audit --no-fund --loglevel=error
# --legacy-peer-deps: other dev-only Mastra packages (@mastra/pg for the
# several-hosts tests) declare a newer core; the subset does not load them.
npm install --no-save --no-audit --no-fund --loglevel=error --legacy-peer-deps -E \
  "@mastra/core@$CORE_VERSION" "@mastra/libsql@$LIBSQL_VERSION"
node -e '
  const want = { "@mastra/core": process.argv[1], "@mastra/libsql": process.argv[2] }
  for (const [name, version] of Object.entries(want)) {
    const got = require(`./node_modules/${name}/package.json`).version
    if (got !== version) { console.error(`${name} is ${got}, expected ${version}`); process.exit(1) }
    console.log(`${name} ${got}`)
  }
' "$CORE_VERSION" "$LIBSQL_VERSION"

echo "==> Compatibility subset: ${SUBSET[*]}"
npx vitest run "${SUBSET[@]}" --testNamePattern "$NOT_SCALE"
