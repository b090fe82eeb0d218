/**
 * The local decision service, issue 12 target 3: latency of GET, create and a
 * 404 through the client on loopback (beside a bare node:http handler giving
 * the same-size answer through the same fetch: the floor of loopback HTTP in
 * this process), create throughput (in this process, and in its own process
 * as `pushary-mastra dev` runs it), memory while 1,000 long-polls are held
 * (service in its own process), and callback delivery after an answer.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { createPusharyClient } from '../../src/pushary/client.js'
import { type BenchEnv, EXTERNAL_ID } from '../lib/env.js'
import type { Row } from '../lib/report.js'
import { median, summarize, timed } from '../lib/stats.js'

const GROUP = '3. Decision service'

async function bareServer(body: string) {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' }).end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/** Timed rounds of the own-process create throughput; the row reports their median. */
const CREATE_ROUNDS = 3

let sequence = 0
const decisionInput = (callbackUrl?: string) => ({
  question: 'Refund EUR 48.00 on order 1001?',
  externalId: EXTERNAL_ID,
  idempotencyKey: `bench-${process.pid}-${Date.now()}-${sequence++}`,
  ...(callbackUrl ? { callbackUrl } : {}),
})

async function latency(
  samples: number,
  ours: () => Promise<unknown>,
  bare: () => Promise<unknown>,
): Promise<{ ours: number[]; bare: number[] }> {
  const result = { ours: [] as number[], bare: [] as number[] }
  for (let index = 0; index < samples + 20; index++) {
    const a = await timed(ours)
    const b = await timed(bare)
    if (index >= 20) {
      result.ours.push(a.ms)
      result.bare.push(b.ms)
    }
  }
  return result
}

function latencyRow(scenario: string, samples: { ours: number[]; bare: number[] }, goal: number): Row {
  const summary = summarize(samples.ours)
  return {
    group: GROUP,
    scenario,
    params: `${samples.ours.length} sequential requests after 20 warm-ups, service in process`,
    unit: 'ms',
    median: summary.median,
    p95: summary.p95,
    p99: summary.p99,
    baseline: { label: 'bare node:http, same fetch', value: median(samples.bare) },
    ...(goal > 0 ? { target: `p50 < ${goal} ms`, met: summary.median < goal } : {}),
  }
}

export async function benchServiceLatency(
  env: BenchEnv,
  options: { samples: number; creates: number },
): Promise<Row[]> {
  const client = createPusharyClient({ baseUrl: env.service.baseUrl, apiKey: env.service.apiKey })
  const created = await client.decisions.create(decisionInput())
  const sampleBody = JSON.stringify(await client.decisions.get(created.decisionId))
  const bare = await bareServer(sampleBody)
  const bareGet = () => fetch(`${bare.url}/decision`).then((response) => response.json())
  const barePost = () =>
    fetch(`${bare.url}/decision`, { method: 'POST', body: JSON.stringify(decisionInput()) }).then((r) =>
      r.json(),
    )
  const bareMissing = () => fetch(`${bare.url}/missing`).then((response) => response.text())
  const rows: Row[] = []
  try {
    rows.push(
      latencyRow(
        '`GET /decisions/:id` through the client',
        await latency(options.samples, () => client.decisions.get(created.decisionId), bareGet),
        1,
      ),
    )
    rows.push(
      latencyRow(
        '`POST /decisions` (create) through the client',
        await latency(options.samples, () => client.decisions.create(decisionInput()), barePost),
        2,
      ),
    )
    rows.push(
      latencyRow(
        '404 on an unknown path (raw fetch)',
        await latency(
          options.samples,
          () => fetch(`${env.service.url}/api/v1/server/nowhere`).then((response) => response.text()),
          bareMissing,
        ),
        0,
      ),
    )
    // Throughput: creates in flight together, as many application processes would send them.
    const concurrency = 16
    let next = 0
    const { ms } = await timed(async () => {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < options.creates) await client.decisions.create(decisionInput())
        }),
      )
    })
    const perSecond = options.creates / (ms / 1000)
    rows.push({
      group: GROUP,
      scenario: 'creates per second, service in the bench process',
      params: `${options.creates} creates, ${concurrency} in flight; client and service share one thread`,
      unit: '/s',
      median: perSecond,
    })
  } finally {
    await bare.close()
  }
  return rows
}

export async function benchCallbackDelivery(env: BenchEnv, options: { samples: number }): Promise<Row> {
  const delays: number[] = []
  for (let index = 0; index < options.samples + 10; index++) {
    const created = await env.client.decisions.create(decisionInput(env.receiver.url))
    const answeredAt = performance.now()
    await env.client.decisions.answer(created.decisionId, 'yes')
    const callback = await env.receiver.next(created.decisionId)
    if (index >= 10) delays.push(callback.arrivedAt - answeredAt)
  }
  const summary = summarize(delays)
  return {
    group: GROUP,
    scenario: 'callback delivery: answer sent → signed callback received',
    params: `${options.samples} answers one after another, receiver on loopback`,
    unit: 'ms',
    median: summary.median,
    p95: summary.p95,
    p99: summary.p99,
    target: 'p99 < 50 ms',
    met: summary.p99 < 50,
  }
}

function lines(child: ChildProcessByStdio<Writable, Readable, null>) {
  const queue: string[] = []
  const waiting: ((line: string) => void)[] = []
  createInterface({ input: child.stdout }).on('line', (line) => {
    const waiter = waiting.shift()
    if (waiter) waiter(line)
    else queue.push(line)
  })
  return () =>
    new Promise<string>((resolve, reject) => {
      const line = queue.shift()
      if (line !== undefined) return resolve(line)
      waiting.push(resolve)
      child.once('exit', (code) => reject(new Error(`service process exited ${code}`)))
    })
}

/** The built service alone in its own process, as `pushary-mastra dev` runs it. */
async function serviceProcess(pkg: string, dbPath: string) {
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, '../fixtures/service-process.mjs'),
      new URL('dev-server.js', pkg).href,
      dbPath,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const nextLine = lines(child)
  const started = JSON.parse(await nextLine()) as { url: string; baseUrl: string; apiKey: string }
  return {
    ...started,
    client: createPusharyClient({ baseUrl: started.baseUrl, apiKey: started.apiKey }),
    rss: async () => {
      child.stdin.write('rss\n')
      return (JSON.parse(await nextLine()) as { rss: number }).rss / 1024 / 1024
    },
    close: async () => {
      child.stdin.write('close\n')
      await new Promise((resolve) => child.once('exit', resolve))
    },
  }
}

/**
 * Create throughput of the service in its own process (the client in the
 * bench process, 16 creates in flight), the way an application talks to
 * `pushary-mastra dev`.
 */
export async function benchCreatesOwnProcess(options: {
  pkg: string
  dir: string
  creates: number
}): Promise<Row> {
  const service = await serviceProcess(options.pkg, join(options.dir, 'creates.db'))
  try {
    const concurrency = 16
    const run = async (total: number) => {
      let next = 0
      return timed(() =>
        Promise.all(
          Array.from({ length: concurrency }, async () => {
            while (next++ < total) await service.client.decisions.create(decisionInput())
          }),
        ),
      )
    }
    const warmups = Math.min(1000, options.creates)
    await run(warmups)
    // Rounds of the same size move by up to ±30% one after another on this
    // kind of machine (the service's SQLite commits run on its one thread):
    // the row is the median round, with the spread beside it.
    const rates: number[] = []
    for (let round = 0; round < CREATE_ROUNDS; round++) {
      const { ms } = await run(options.creates)
      rates.push(options.creates / (ms / 1000))
    }
    const perSecond = median(rates)
    const spread = `${Math.round(Math.min(...rates))}–${Math.round(Math.max(...rates))}/s`
    return {
      group: GROUP,
      scenario: 'creates per second, service in its own process',
      params: `median of ${CREATE_ROUNDS} rounds of ${options.creates} creates (rounds ${spread}) after ${warmups} warm-ups, ${concurrency} in flight; the service built, as \`pushary-mastra dev\` runs it`,
      unit: '/s',
      median: perSecond,
      target: '≥ 1,000 /s',
      met: perSecond >= 1000,
    }
  } finally {
    await service.close()
  }
}

export async function benchLongPolls(options: { pkg: string; dir: string; polls: number }): Promise<Row> {
  const service = await serviceProcess(options.pkg, join(options.dir, 'long-poll.db'))
  const { client, rss } = service
  try {
    const ids: string[] = []
    for (let index = 0; index < options.polls; index++)
      ids.push((await client.decisions.create(decisionInput())).decisionId)
    const idle = await rss()
    const held = ids.map((id) =>
      fetch(`${service.baseUrl}/decisions/${id}?wait=25`, {
        headers: { authorization: `Bearer ${service.apiKey}` },
      }).then(async (response) => ((await response.json()) as { status?: string }).status),
    )
    // Let every request reach the service and park; then sample, twice, and keep the larger.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const peak = Math.max(await rss(), await rss())
    // Answering releases every long-poll with the answer: proof they were all held open.
    for (const id of ids) await client.decisions.answer(id, 'yes')
    const statuses = await Promise.all(held)
    const answered = statuses.filter((status) => status === 'answered').length
    if (answered !== options.polls)
      throw new Error(`only ${answered} of ${options.polls} long-polls returned the answer`)
    return {
      group: GROUP,
      scenario: `service RSS while ${options.polls} long-polls are held`,
      params: `service alone in its own process (built, as \`pushary-mastra dev\` runs it; caps raised to 1,200 connections / 1,100 long-polls per key), ${options.polls} × \`GET /decisions/:id?wait=25\`, all released by answers`,
      unit: 'MB',
      median: peak,
      baseline: { label: 'same process idle', value: idle },
      target: options.polls >= 1000 ? '< 200 MB at 1,000' : 'quick run: fewer polls than the target',
      ...(options.polls >= 1000 ? { met: peak < 200 } : {}),
    }
  } finally {
    await service.close()
  }
}
