/** Order statistics of a sample, nearest-rank. */
export interface Summary {
  n: number
  median: number
  p95: number
  p99: number
}

function rank(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))
  return sorted[index] ?? Number.NaN
}

export function summarize(samples: readonly number[]): Summary {
  if (samples.length === 0) throw new Error('no samples')
  const sorted = [...samples].sort((a, b) => a - b)
  return { n: sorted.length, median: rank(sorted, 0.5), p95: rank(sorted, 0.95), p99: rank(sorted, 0.99) }
}

export function median(samples: readonly number[]): number {
  return summarize(samples).median
}

/** Times `body` once, in milliseconds. */
export async function timed<T>(body: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now()
  const value = await body()
  return { ms: performance.now() - started, value }
}

export function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items]
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1))
    ;[copy[index], copy[other]] = [copy[other] as T, copy[index] as T]
  }
  return copy
}

/**
 * Runs every path once per round, in an order that turns by one each round
 * (so no path always runs right after another and load hits all alike), and
 * keeps each path's value from the rounds after the warm-ups.
 */
export async function inTurningOrder<M extends Record<string, unknown>>(
  rounds: { warmups: number; samples: number },
  paths: { [K in keyof M]: (round: number) => Promise<M[K]> },
): Promise<{ [K in keyof M]: M[K][] }> {
  const names = Object.keys(paths) as (keyof M)[]
  const kept = Object.fromEntries(names.map((name) => [name, []])) as unknown as { [K in keyof M]: M[K][] }
  for (let round = 0; round < rounds.warmups + rounds.samples; round++) {
    for (let index = 0; index < names.length; index++) {
      const name = names[(index + round) % names.length] as keyof M
      const value = await paths[name](round)
      if (round >= rounds.warmups) kept[name].push(value)
    }
  }
  return kept
}
