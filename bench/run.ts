/**
 * The benchmark harness of issue 12. Runs every scenario against real parts
 * (the local decision service over loopback HTTP, Mastra on LibSQL files, the
 * SQLite and PostgreSQL review stores, separate OS processes where the
 * scenario is about processes) and writes BENCHMARKS.md at the repo root.
 *
 *   npm run bench                  # full run, writes BENCHMARKS.md (a few minutes)
 *   npm run bench -- --quick       # smaller sizes, < 2 min, writes bench/results/BENCHMARKS.quick.md
 *   npm run bench -- --only=resume,service   # some scenarios, printed only
 *   npm run bench -- --peer DIR    # also every path beside another implementation installed in
 *                                  # DIR/node_modules/@pushary/mastra (scenario `peer`)
 *
 * BENCHMARKS.md keeps the hand-written block between `<!-- notes -->` and
 * `<!-- /notes -->` from the previous file; everything else is generated.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildPackage } from './lib/build.js'
import { createBenchEnv } from './lib/env.js'
import { machine, type Row, table } from './lib/report.js'
import { createOurSide } from './peer/ours.js'
import { loadPeerSide } from './peer/peer.js'
import { benchAgentBacklog } from './scenarios/agent-backlog.js'
import { benchAgentReview } from './scenarios/agent-review.js'
import { benchApprovers } from './scenarios/approvers.js'
import { benchClaims } from './scenarios/claims.js'
import { benchColdResume } from './scenarios/cold-resume.js'
import { benchImportCost } from './scenarios/import-cost.js'
import { benchForeach, benchMultiItem } from './scenarios/multi-item.js'
import { benchObservability } from './scenarios/observability.js'
import { type CallBreakdown, type CpuShare, countPerResume, profileResumes } from './scenarios/profile.js'
import { benchReconcile } from './scenarios/reconcile.js'
import { benchResume } from './scenarios/resume.js'
import {
  benchCallbackDelivery,
  benchCreatesOwnProcess,
  benchLongPolls,
  benchServiceLatency,
} from './scenarios/service.js'
import { benchSideBySide } from './scenarios/side-by-side.js'

const ROOT = join(import.meta.dirname, '..')
const SCENARIOS = [
  'resume',
  'agent',
  'profile',
  'service',
  'long-polls',
  'multi-item',
  'claims',
  'import',
  'cold',
  'reconcile',
  'observability',
  'approvers',
  'peer',
] as const
type Scenario = (typeof SCENARIOS)[number]

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const onlyArg = args.find((arg) => arg.startsWith('--only='))
const peerDir = peerArgument(args)
// The side-by-side scenario runs only beside a peer, and by default whenever one is given.
const only = onlyArg
  ? (onlyArg.slice('--only='.length).split(',') as Scenario[])
  : SCENARIOS.filter((name) => name !== 'peer' || peerDir !== undefined)
for (const name of only) if (!SCENARIOS.includes(name)) throw new Error(`unknown scenario ${name}`)
if (only.includes('peer') && peerDir === undefined) throw new Error('the peer scenario needs --peer DIR')

/** `--peer DIR` or `--peer=DIR`: a folder with another implementation in node_modules/@pushary/mastra. */
function peerArgument(argv: readonly string[]): string | undefined {
  const joined = argv.find((arg) => arg.startsWith('--peer='))
  if (joined) return joined.slice('--peer='.length) || missingPeerDir()
  const index = argv.indexOf('--peer')
  if (index === -1) return undefined
  const value = argv[index + 1]
  return value && !value.startsWith('--') ? value : missingPeerDir()
}

function missingPeerDir(): never {
  throw new Error('--peer needs a folder: --peer DIR, where DIR/node_modules/@pushary/mastra is installed')
}

const sizes = quick
  ? {
      resume: { warmups: 3, samples: 15 },
      observability: { warmups: 3, samples: 15 },
      approvers: { warmups: 2, samples: 15 },
      agent: { warmups: 2, samples: 6 },
      backlog: { waiting: 100, warmups: 1, samples: 5 },
      counted: 5,
      profiled: 5,
      service: { samples: 30, creates: 200 },
      callbacks: 20,
      polls: 100,
      multi: { small: 10, large: 50 },
      foreach: { warmups: 1, rounds: 2 },
      claims: { reviews: 100, workers: [1, 4, 16] },
      imports: 2,
      cold: 1,
      reconcile: { small: 10, waiting: 100, limit: 10, warmups: 1, samples: 5 },
      peer: {
        agent: { warmups: 2, samples: 6 },
        backlog: { waiting: 30, warmups: 1, samples: 4 },
        step: { warmups: 2, samples: 10 },
        foreach: [
          { items: 10, warmups: 1, samples: 2 },
          { items: 100, warmups: 0, samples: 1 },
        ],
      },
    }
  : {
      resume: { warmups: 5, samples: 75 },
      observability: { warmups: 5, samples: 75 },
      approvers: { warmups: 5, samples: 75 },
      agent: { warmups: 3, samples: 50 },
      backlog: { waiting: 1000, warmups: 2, samples: 15 },
      counted: 10,
      profiled: 20,
      service: { samples: 200, creates: 2000 },
      callbacks: 200,
      polls: 1000,
      multi: { small: 10, large: 1000 },
      foreach: { warmups: 1, rounds: 5 },
      claims: { reviews: 2000, workers: [1, 4, 16] },
      imports: 10,
      cold: 5,
      reconcile: { small: 10, waiting: 1000, limit: 10, warmups: 2, samples: 15 },
      peer: {
        agent: { warmups: 3, samples: 50 },
        backlog: { waiting: 200, warmups: 2, samples: 15 },
        step: { warmups: 5, samples: 75 },
        foreach: [
          { items: 10, warmups: 1, samples: 5 },
          { items: 100, warmups: 1, samples: 2 },
        ],
      },
    }

const PEER_LIMITS = { keepAliveTimeoutMs: 65_000 }

function log(message: string): void {
  process.stderr.write(`[bench ${(performance.now() / 1000).toFixed(0)}s] ${message}\n`)
}

function breakdownTable(breakdowns: readonly CallBreakdown[]): string {
  const lines: string[] = []
  for (const breakdown of breakdowns) {
    lines.push(
      '',
      `${breakdown.path}: ${breakdown.msPerResume.toFixed(1)} ms per ${breakdown.per} (mean of ${breakdown.resumes}, counted).`,
      '',
      `| per ${breakdown.per} | calls | ms (inclusive) |`,
      '|---|---:|---:|',
      ...breakdown.rows.map(
        (row) =>
          `| ${row.key} | ${Number.isInteger(row.perResume) ? row.perResume : row.perResume.toFixed(1)} | ${row.msPerResume.toFixed(2)} |`,
      ),
    )
  }
  return lines.join('\n')
}

function cpuTable(shares: readonly CpuShare[], resumes: number): string {
  // The inspector's own start/stop shows up as native `dispatch`: not part of a resume.
  const kept = shares.filter((share) => share.category !== 'native: dispatch')
  const sum = kept.reduce((total, share) => total + share.msPerResume, 0)
  const top = kept.slice(0, 14)
  const rest = kept.slice(14).reduce((total, share) => total + share.msPerResume, 0)
  return [
    '',
    `Sampled CPU profile of ${resumes} \`resumeDecision\` calls (200 µs sampling, only the resume itself; the profiler's own start/stop excluded), self time grouped by package or module, native frames charged to the package that called them:`,
    '',
    '| where | ms per resume | share |',
    '|---|---:|---:|',
    ...top.map(
      (share) =>
        `| ${share.category} | ${share.msPerResume.toFixed(2)} | ${((share.msPerResume / sum) * 100).toFixed(1)}% |`,
    ),
    `| everything else | ${rest.toFixed(2)} | ${((rest / sum) * 100).toFixed(1)}% |`,
  ].join('\n')
}

function previousNotes(path: string): string {
  const placeholder = '<!-- notes -->\n_No notes yet._\n<!-- /notes -->'
  if (!existsSync(path)) return placeholder
  const match = /<!-- notes -->[\s\S]*?<!-- \/notes -->/.exec(readFileSync(path, 'utf8'))
  return match?.[0] ?? placeholder
}

async function main(): Promise<void> {
  const started = performance.now()
  const dir = mkdtempSync(join(tmpdir(), 'pushary-bench-'))
  const wants = (name: Scenario) => only.includes(name)
  const rows: Row[] = []
  let breakdowns: CallBreakdown[] = []
  let shares: CpuShare[] = []
  let sideNotes: string[] = []
  const needsPackage =
    wants('service') || wants('long-polls') || wants('claims') || wants('import') || wants('cold')
  const pkg = needsPackage ? await buildPackage() : ''
  if (needsPackage) log('built the package (ESM, tsup) for the process scenarios')

  if (
    ['resume', 'agent', 'profile', 'service', 'multi-item', 'observability', 'approvers', 'peer'].some(
      (name) => wants(name as Scenario),
    )
  ) {
    // Beside a peer, the service keeps idle sockets longer than the 5 s
    // default: a request sent on a pooled socket just as the service closes
    // it fails with ECONNRESET; our client retries that for idempotent
    // requests, the peer's SDK does not, and a 100-item start sends 100 at once.
    const env = await createBenchEnv('main', peerDir === undefined ? {} : { serviceLimits: PEER_LIMITS })
    try {
      if (wants('resume')) {
        log('answer → resumed run')
        rows.push(...(await benchResume(env, sizes.resume)))
      }
      if (wants('agent')) {
        log('agent reviews')
        rows.push(...(await benchAgentReview(env, sizes.agent)))
        log(`agent reviews with ${sizes.backlog.waiting} others waiting`)
        rows.push(...(await benchAgentBacklog(env, sizes.backlog)))
      }
      if (wants('profile')) {
        log('where the time goes: counting and profiling resumes')
        breakdowns = await countPerResume(env, sizes.counted)
        shares = await profileResumes(env, sizes.profiled)
      }
      if (wants('service')) {
        log('decision service latency, throughput, callback delivery')
        rows.push(...(await benchServiceLatency(env, sizes.service)))
        rows.push(await benchCallbackDelivery(env, { samples: sizes.callbacks }))
      }
      if (wants('multi-item')) {
        log('multi-item batches')
        rows.push(...(await benchForeach(env, sizes.foreach)))
        rows.push(...(await benchMultiItem(env, sizes.multi)))
      }
      if (wants('observability')) {
        log('resume with observability on vs off')
        rows.push(...(await benchObservability(env, sizes.observability)))
      }
      if (wants('approvers')) {
        log('one approver vs 2 of 3 on the same workflow')
        rows.push(...(await benchApprovers(env, sizes.approvers)))
      }
      if (wants('peer') && peerDir !== undefined) {
        const sides = [createOurSide(env), await loadPeerSide(env, peerDir)] as const
        log(`beside ${sides[1].label} from ${peerDir}`)
        rows.push(...(await benchSideBySide(env, sides, sizes.peer, log)))
        sideNotes = sides.flatMap((side) => side.describes)
      }
    } finally {
      await env.close()
    }
  }
  if (wants('service')) {
    log('create throughput, service in its own process')
    rows.push(await benchCreatesOwnProcess({ pkg, dir, creates: sizes.service.creates }))
  }
  if (wants('long-polls')) {
    log(`${sizes.polls} long-polls`)
    rows.push(await benchLongPolls({ pkg, dir, polls: sizes.polls }))
  }
  if (wants('claims')) {
    log('store claims across processes')
    rows.push(...(await benchClaims({ pkg, dir, ...sizes.claims })))
  }
  if (wants('import')) {
    log('import cost')
    rows.push(...(await benchImportCost({ pkg, samples: sizes.imports })))
  }
  if (wants('cold')) {
    log('cold resume in a fresh process')
    rows.push(await benchColdResume({ pkg, samples: sizes.cold }))
  }
  if (wants('reconcile')) {
    log(`reconcile rounds with ${sizes.reconcile.waiting} approvals waiting`)
    rows.push(...(await benchReconcile(sizes.reconcile)))
  }
  // Numeric, so group 10 follows group 9.
  rows.sort((a, b) => a.group.localeCompare(b.group, 'en', { numeric: true }))
  const seconds = (performance.now() - started) / 1000
  log(`done in ${seconds.toFixed(0)} s`)

  const command = [quick ? ' --quick' : '', peerDir !== undefined ? ' --peer DIR' : '']
    .join('')
    .replace(/^ /, ' -- ')
  const target = quick ? join(ROOT, 'bench/results/BENCHMARKS.quick.md') : join(ROOT, 'BENCHMARKS.md')
  const body = [
    '# Benchmarks',
    '',
    `Generated by \`npm run bench${command}\` (bench/run.ts) on ${new Date().toISOString().slice(0, 10)} in ${seconds.toFixed(0)} s; do not edit by hand except between the notes markers.`,
    'Targets are those of issues 12, 21, 41 and 42. Every baseline was measured in the same run, interleaved with the figure it is compared to.',
    'Unless a row says otherwise, everything runs in one process on loopback: the local decision service, Mastra on a LibSQL file,',
    'the SQLite review store. Medians and percentiles are nearest-rank.',
    '',
    machine(),
    '',
    table(rows),
    '',
    ...(sideNotes.length > 0
      ? [
          'Beside the peer (group 8), each side times only its own calls; same review store, decision service and Mastra instance:',
          '',
          ...sideNotes.map((note) => `- ${note}`),
          '',
        ]
      : []),
    '## Where the time goes',
    '',
    'Calls made by one answer → resumed run (the timed part only: the first pass and the answer are not counted),',
    'for the workflow path, the callback path, the agent path beside native `approveToolCallGenerate`, and one item',
    'of a `.foreach` and of a batch; then the two first passes with a row of their own: an agent review opened, and',
    'a batch started (per item). Every review-store write (`claim`, `finish`, `recordReceipt`) is one commit (on',
    'SQLite, `claim` and `finish` are one statement each, `save` one transaction);',
    '`Mastra storage` is the LibSQL store Mastra uses (`loadWorkflowSnapshot` reads a run snapshot; on the agent',
    "rows it is the agent's own Mastra, workflows and memory domains). HTTP times include the in-process service",
    'handling the request. Inclusive times are measured with every call wrapped, so they sum to more than the table.',
    breakdowns.length > 0 ? breakdownTable(breakdowns) : '\n_(not measured in this run)_',
    shares.length > 0 ? cpuTable(shares, sizes.profiled) : '',
    '',
    previousNotes(join(ROOT, 'BENCHMARKS.md')),
    '',
  ].join('\n')
  process.stdout.write(`${body}\n`)
  if (onlyArg) return
  mkdirSync(join(target, '..'), { recursive: true })
  writeFileSync(target, body)
  log(`wrote ${target}`)
}

main()
  .then(() => process.exit(0))
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  })
