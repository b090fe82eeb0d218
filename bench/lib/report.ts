/**
 * Rows of BENCHMARKS.md and how they are written. Every figure in the file
 * comes from one run of `npm run bench`; nothing is edited by hand.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { summarize } from './stats.js'

export interface Row {
  /** Issue 12 target group, e.g. `1. Answer → resumed run`. */
  group: string
  scenario: string
  params: string
  unit: 'ms' | 'ms/item' | '/s' | 'MB'
  median: number
  p95?: number | undefined
  p99?: number | undefined
  /** The side-by-side figure measured in the same run. */
  baseline?: { label: string; value: number } | undefined
  /** The other implementation's median on the same path, same run and order (`--peer`). */
  peer?: { label: string; value: number } | undefined
  /** Issue 12's target in words, and whether this run met it. */
  target?: string | undefined
  met?: boolean | undefined
  /** One short remark (e.g. "zero double claims: checked"). */
  note?: string | undefined
}

/**
 * A timed row: its median, p95 and p99 from `samples` (ms), under `head`'s
 * group, scenario and parameters, with whatever else the row says.
 *
 * @example
 * timedRow({ group: GROUP, scenario: 'resume', params }, samples, { baseline: { label: 'floor', value: 3.9 } })
 */
export function timedRow(
  head: Pick<Row, 'group' | 'scenario' | 'params'>,
  samples: readonly number[],
  extra: Partial<Row> = {},
): Row {
  const summary = summarize(samples)
  return { ...head, unit: 'ms', median: summary.median, p95: summary.p95, p99: summary.p99, ...extra }
}

export interface Section {
  title: string
  body: string
}

function figure(value: number | undefined, unit: Row['unit']): string {
  if (value === undefined || Number.isNaN(value)) return ''
  if (unit === '/s' || unit === 'MB') return value.toFixed(0)
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|')
}

/** The peer's two cells of a row, present only when some row was measured beside a peer. */
function peerCells(row: Row): string {
  if (!row.peer) return ' | |'
  const ratio = row.peer.value > 0 ? `${(row.median / row.peer.value).toFixed(2)}×` : ''
  return ` ${figure(row.peer.value, row.unit)} ${row.unit} | ${ratio} |`
}

export function table(rows: readonly Row[]): string {
  const withPeer = rows.some((row) => row.peer)
  const lines = withPeer
    ? [
        '| scenario | parameters | median | p95 | p99 | baseline (same run) | ratio | peer (same run) | ours/peer | target | met |',
        '|---|---|---:|---:|---:|---|---:|---:|---:|---|:-:|',
      ]
    : [
        '| scenario | parameters | median | p95 | p99 | baseline (same run) | ratio | target | met |',
        '|---|---|---:|---:|---:|---|---:|---|:-:|',
      ]
  let group = ''
  for (const row of rows) {
    if (row.group !== group) {
      group = row.group
      lines.push(`| **${cell(group)}** | | | | | | | | |${withPeer ? ' | |' : ''}`)
    }
    const unit = ` ${row.unit}`
    const baseline = row.baseline
      ? `${cell(row.baseline.label)}: ${figure(row.baseline.value, row.unit)}${unit}`
      : ''
    const ratio =
      row.baseline && row.baseline.value > 0 ? `${(row.median / row.baseline.value).toFixed(2)}×` : ''
    const met = row.met === undefined ? '' : row.met ? 'yes' : '**no**'
    const scenario = row.note ? `${row.scenario} (${row.note})` : row.scenario
    const peer = withPeer ? peerCells(row) : ''
    lines.push(
      `| ${cell(scenario)} | ${cell(row.params)} | ${figure(row.median, row.unit)}${unit} | ${figure(row.p95, row.unit)} | ${figure(row.p99, row.unit)} | ${baseline} | ${ratio} |${peer} ${cell(row.target ?? '')} | ${met} |`,
    )
  }
  return lines.join('\n')
}

export function machine(): string {
  const cpu = cpus()[0]?.model?.trim() ?? 'unknown CPU'
  const root = join(import.meta.dirname, '../..')
  const version = (name: string) =>
    (
      JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as {
        version: string
      }
    ).version
  let commit = 'unknown'
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim()
  } catch {
    // not a git checkout
  }
  let load = ''
  try {
    load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  } catch {
    // not Linux
  }
  return [
    `- Machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GB RAM${load ? `; load average at the end ${load}` : ''}`,
    `- Node ${process.version}; @mastra/core ${version('@mastra/core')}, @mastra/libsql ${version('@mastra/libsql')}; commit ${commit}`,
  ].join('\n')
}
