import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseApproversFlags } from '../../examples/refund-workflow/approvers-refund.js'
import { createPusharyClient } from '../../src/pushary/client.js'
import { createPusharyDevServer } from '../../src/server/dev-server.js'
import { runExample } from './run-example.js'

const demo = (...args: string[]) => runExample('examples/refund-workflow/main.ts', ['--fresh', ...args])

describe('refund demo (npm run demo)', () => {
  it('executes the workflow refund exactly once when answered approve, and none when answered deny', async () => {
    const [approved, denied] = await Promise.all([demo('--answer', 'approve'), demo('--answer', 'deny')])
    expect(approved.stdout).toContain('/review/dec_')
    expect(approved.stdout).toContain('Outcome: approved; refund executed once')
    expect(approved.code).toBe(0)
    expect(denied.stdout).toContain('Outcome: declined (denied); refunds executed for')
    expect(denied.stdout).toMatch(/refunds executed for order-[a-z0-9]+: 0/)
    expect(denied.code).toBe(0)
  }, 180_000)

  it('declines a workflow choice or text answered "yes" as not approved, without a refund', async () => {
    const [select, input] = await Promise.all([demo('--answer', 'select'), demo('--answer', 'input')])
    for (const run of [select, input]) {
      expect(run.stdout).toMatch(
        /Outcome: declined \(not_approved\); refunds executed for order-[a-z0-9]+: 0/,
      )
      expect(run.code).toBe(0)
    }
  }, 180_000)

  it('runs the agent refund once on approve and never on deny (--agent)', async () => {
    const [approved, denied] = await Promise.all([
      demo('--agent', '--answer', 'approve'),
      demo('--agent', '--answer', 'deny'),
    ])
    expect(approved.stdout).toContain('asked by an agent')
    expect(approved.stdout).toContain('Outcome: approved; refund executed once')
    expect(approved.code).toBe(0)
    expect(denied.stdout).toMatch(/Outcome: declined \(denied\); refunds executed for order-[a-z0-9]+: 0/)
    expect(denied.code).toBe(0)
  }, 180_000)

  it('keeps an agent question answered "yes" as data, never a refund (--agent select and input)', async () => {
    const [select, input] = await Promise.all([
      demo('--agent', '--answer', 'select'),
      demo('--agent', '--answer', 'input'),
    ])
    for (const run of [select, input]) {
      expect(run.stdout).toMatch(
        /Outcome: answered "yes" \(data, never approval\); refunds executed for order-[a-z0-9]+: 0/,
      )
      expect(run.code).toBe(0)
    }
  }, 180_000)

  it('refuses an unknown --answer with exit code 2', async () => {
    const run = await demo('--answer', 'maybe')
    expect(run.stdout).toContain('--answer must be approve, deny, select or input')
    expect(run.code).toBe(2)
  }, 180_000)

  it('documents every flag with --help and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const run = await runExample('examples/refund-workflow/main.ts', [flag])
      expect(run.code).toBe(0)
      expect(run.stdout).toMatch(/^Usage: npm run demo -- \[options\]/)
      for (const documented of [
        '--answer <answer>',
        '--agent',
        '--model <p/name>',
        '--expire',
        '--fresh',
        '--port <n>',
        '--public-url <url>',
        '--timeout <s>',
        '--approvers <ids>',
        '--required <n>',
        '--help, -h',
        'Ctrl-C cancels the questions',
      ]) {
        expect(run.stdout).toContain(documented)
      }
    }
    const unknown = await runExample('examples/refund-workflow/main.ts', ['--bogus'])
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toContain('Usage: npm run demo')
  }, 180_000)

  it.each([
    ['the workflow', []],
    ['the agent', ['--agent']],
  ])(
    'cancels the question %s opened when interrupted with Ctrl-C, then exits 130',
    async (_path, args) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'examples/refund-workflow/main.ts', '--fresh', ...args],
        {
          cwd: process.cwd(),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      )
      let output = ''
      const closed = new Promise<number | null>((resolveClosed) => child.once('close', resolveClosed))
      const seen = (pattern: RegExp) =>
        new Promise<RegExpExecArray>((resolveSeen, reject) => {
          const check = () => {
            const match = pattern.exec(output)
            if (match) resolveSeen(match)
          }
          child.stdout.on('data', check)
          void closed.then(() => reject(new Error(`the demo ended before ${pattern}:\n${output}`)))
        })
      child.stdout.on('data', (chunk) => {
        output += chunk
      })
      child.stderr.on('data', (chunk) => {
        output += chunk
      })
      const timer = setTimeout(() => child.kill('SIGKILL'), 170_000)
      try {
        // The interactive demo: link the phone the way a person does (the link's form post)...
        const [, link] = await seen(/tap "Link this phone"\):\n {2}(http\S+)\n/)
        const tapped = await fetch(link as string, { method: 'POST', redirect: 'manual' })
        expect(tapped.status).toBe(303)
        // ...then, once the question is on the phone, press Ctrl-C.
        const [, decisionId] = await seen(/reviewer link {2}http\S+\/review\/(dec_\w+)/)
        child.kill('SIGINT')
        expect(await closed, output).toBe(130)
        expect(output).toContain('Interrupted: cancelling the questions this demo opened')
        expect(output).toContain(`${decisionId} cancelled`)

        // The demo's own service, reopened on its database: the question is cancelled there.
        const [, dataDir] = /\(data in (\S+)\)/.exec(output) ?? []
        const service = await createPusharyDevServer({ dbPath: join(dataDir as string, 'demo.db'), port: 0 })
        try {
          const client = createPusharyClient({ baseUrl: service.baseUrl, apiKey: service.apiKey })
          expect((await client.decisions.get(decisionId as string)).status).toBe('cancelled')
          const pending = await client.decisions.list({ status: 'pending' })
          expect(pending.decisions).toEqual([])
        } finally {
          await service.close()
        }
      } finally {
        clearTimeout(timer)
      }
    },
    180_000,
  )

  it('settles several approvers unattended (--approvers --answer): 2 of 3 approve once, one denial declines', async () => {
    const [approved, denied] = await Promise.all([
      demo('--approvers', 'alice,bob,carol', '--required', '2', '--answer', 'approve'),
      demo('--approvers', 'alice,bob,carol', '--required', '2', '--answer', 'deny'),
    ])
    expect(approved.stdout).toContain('from 2 of 3 approvers (one denial declines)')
    expect(approved.stdout).toMatch(/ {2}carol {2}reviewer link {2}http\S+\/review\/dec_\w+/)
    expect(approved.stdout).toContain('Outcome: approved; refund executed once')
    expect(approved.stdout).toMatch(/ {2}carol {2}withdrawn \(the set was settled\)/)
    expect(approved.code).toBe(0)
    expect(denied.stdout).toMatch(/Outcome: declined \(denied\); refunds executed for order-[a-z0-9]+: 0/)
    expect(denied.stdout).toMatch(/ {2}alice {2}answered "no"/)
    expect(denied.stdout).toMatch(/ {2}bob {4}withdrawn \(the set was settled\)/)
    expect(denied.code).toBe(0)
  }, 180_000)

  it('refuses --approvers flags that cannot work with exit code 2, before asking anyone', async () => {
    const run = await demo('--approvers', 'alice,bob', '--required', '3')
    expect(run.code).toBe(2)
    expect(run.stdout).toContain('--required must be a whole number from 1 to 2 (the approvers named)')
    expect(run.stdout).not.toContain('Approval requested')
    const refusal = (values: Parameters<typeof parseApproversFlags>[0]) => parseApproversFlags(values)
    expect(refusal({ approvers: 'alice,alice' })).toBe('--approvers names someone twice')
    expect(refusal({ approvers: ' , ' })).toMatch(/needs at least one name/)
    expect(refusal({ required: '2' })).toBe('--required needs --approvers')
    expect(refusal({ approvers: 'a,b', required: '1.5' })).toMatch(/whole number from 1 to 2/)
    expect(refusal({ approvers: 'a,b', agent: true })).toMatch(/cannot be combined with --agent/)
    expect(refusal({ approvers: 'a,b', expire: true })).toMatch(/cannot be combined with --expire/)
    expect(refusal({ approvers: 'a,b', answer: 'select' })).toMatch(/--answer must be approve or deny/)
    expect(refusal({ approvers: 'alice, bob ,carol' })).toEqual({
      approvers: ['alice', 'bob', 'carol'],
      required: 3,
    })
    expect(refusal({})).toBeNull()
  }, 180_000)

  it('links each approver through their own link, counts the answers on their cards and tells the withdrawn one why (--approvers)', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'examples/refund-workflow/main.ts',
        '--fresh',
        '--approvers',
        'alice,bob,carol',
        '--required',
        '2',
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let output = ''
    const closed = new Promise<number | null>((resolveClosed) => child.once('close', resolveClosed))
    const seen = (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolveSeen, reject) => {
        const check = () => {
          const match = pattern.exec(output)
          if (match) resolveSeen(match)
        }
        check()
        child.stdout.on('data', check)
        void closed.then(() => reject(new Error(`the demo ended before ${pattern}:\n${output}`)))
      })
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    child.stderr.on('data', (chunk) => {
      output += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 170_000)
    try {
      // Each person opens their own link and taps "Link this phone" (the link's form post).
      const cookies = new Map<string, string>()
      for (const name of ['alice', 'bob', 'carol']) {
        const [, link] = await seen(
          new RegExp(`as "${name}" \\(open it, then tap "Link this phone"\\):\\n {2}(http\\S+)\\n`),
        )
        const tapped = await fetch(link as string, { method: 'POST', redirect: 'manual' })
        expect(tapped.status).toBe(303)
        cookies.set(name, (tapped.headers.get('set-cookie') ?? '').split(';')[0] as string)
      }
      const decision = new Map<string, string>()
      let origin = ''
      for (const name of ['alice', 'bob', 'carol']) {
        const [, url, id] = await seen(
          new RegExp(` {2}${name} +reviewer link {2}(http\\S+)\\/review\\/(dec_\\w+)\\n`),
        )
        origin = url as string
        decision.set(name, id as string)
      }
      const page = async (name: string, path: string) => {
        const response = await fetch(`${origin}${path}`, { headers: { cookie: cookies.get(name) as string } })
        return response.text()
      }
      // An answer as the page's form sends it, with the card's CSRF token.
      const answer = async (name: string, value: string) => {
        const id = decision.get(name) as string
        const csrf = /name="csrf" value="([^"]+)"/.exec(await page(name, `/review/${id}`))?.[1] as string
        const response = await fetch(`${origin}/review/${id}/answer`, {
          method: 'POST',
          headers: {
            cookie: cookies.get(name) as string,
            accept: 'application/json',
            'content-type': 'application/x-www-form-urlencoded',
            origin,
          },
          body: new URLSearchParams({ answer: value, csrf }).toString(),
        })
        expect(response.status).toBe(200)
      }
      const line = (markup: string) =>
        /<p class="approvers"[^>]*>(.*?)<\/p>/.exec(markup)?.[1]?.replace(/<[^>]+>/g, '') ?? null

      expect(line(await page('alice', '/review/list'))).toBe('0 of 2 approvals so far · 3 asked · 0 answered')
      await answer('bob', 'yes')
      expect(line(await page('alice', '/review/list'))).toBe('1 of 2 approvals so far · 3 asked · 1 answered')
      // Carol reads her card before the set settles; the demo's service stops when it finishes.
      expect(line(await page('carol', `/review/${decision.get('carol')}`))).toBe(
        '1 of 2 approvals so far · 3 asked · 1 answered',
      )
      await answer('alice', 'yes')
      expect(await closed, output).toBe(0)
      expect(output).toContain('Outcome: approved; refund executed once')
      expect(output).toMatch(/ {2}carol {2}withdrawn \(the set was settled\)/)

      // The demo's service, reopened on its database: carol's question says why it left.
      const [, dataDir] = /\(data in (\S+)\)/.exec(output) ?? []
      const service = await createPusharyDevServer({ dbPath: join(dataDir as string, 'demo.db'), port: 0 })
      try {
        const response = await fetch(`${service.url}/review/${decision.get('carol')}`, {
          headers: { cookie: cookies.get('carol') as string },
        })
        expect(await response.text()).toContain(
          'Withdrawn: the approvers&#39; set was settled (2 of 2 approvals).',
        )
      } finally {
        await service.close()
      }
    } finally {
      clearTimeout(timer)
    }
  }, 180_000)
})
