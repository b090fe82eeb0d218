/**
 * `pushary-mastra connect` as a real OS process (from the sources, through
 * tsx) against the local decision service over loopback, configured only by
 * `PUSHARY_API_KEY` / `PUSHARY_BASE_URL` as a user's shell would be. The
 * phone's tap on the printed link is the reviewer page's own form post.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeScript } from '../helpers/node-script.js'
import { type Harness, serviceFixture } from '../server/service-harness.js'

const ROOT = resolve(import.meta.dirname, '../..')
const { start } = serviceFixture('connect')
const children: ChildProcessWithoutNullStreams[] = []

afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
})

interface Connecting {
  /** Resolves with the first stdout text that matches, or rejects when the process ends first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>
  done: Promise<{ code: number | null; stdout: string; stderr: string }>
}

function connect(args: readonly string[], env: Record<string, string | undefined>): Connecting {
  const childEnv: NodeJS.ProcessEnv = { ...process.env }
  delete childEnv.PUSHARY_API_KEY
  delete childEnv.PUSHARY_BASE_URL
  for (const [name, value] of Object.entries(env)) if (value !== undefined) childEnv[name] = value
  const child = spawn(process.execPath, [...nodeScript('src/cli/main.ts'), 'connect', ...args], {
    cwd: ROOT,
    env: childEnv,
  })
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolveDone) => {
    child.once('close', (code) => resolveDone({ code, stdout, stderr }))
  })
  return {
    done,
    waitFor: (pattern) =>
      new Promise((resolveMatch, reject) => {
        const check = () => {
          const match = pattern.exec(stdout)
          if (match) {
            child.stdout.off('data', check)
            resolveMatch(match)
          }
        }
        child.stdout.on('data', check)
        check()
        void done.then(() => reject(new Error(`connect ended before ${pattern}:\n${stdout}\n${stderr}`)))
      }),
  }
}

const configured = (h: Harness) => ({ PUSHARY_API_KEY: h.server.apiKey, PUSHARY_BASE_URL: h.server.baseUrl })

/** Opens the link the way a phone does: the page, then the "Link this phone" form post. */
async function tapOnPhone(link: string): Promise<void> {
  const shown = await fetch(link, { redirect: 'manual' })
  await shown.body?.cancel()
  const linked = await fetch(link, { method: 'POST', redirect: 'manual' })
  await linked.body?.cancel()
  expect(linked.status).toBe(303)
}

const LINK =
  /Enrolment link for "customer-1" \(single use, valid \d+ min\):\n {2}(http:\/\/127\.0\.0\.1:\d+\/e\/\S+)\n/

describe('pushary-mastra connect', () => {
  it('prints the link with a QR code, and the reachability once the phone has tapped it', async () => {
    const h = await start()
    const run = connect(['customer-1'], configured(h))
    const [, link] = await run.waitFor(LINK)
    await run.waitFor(/Waiting up to \d+ s/)
    await tapOnPhone(link as string)
    const { code, stdout, stderr } = await run.done
    expect(code, stderr).toBe(0)
    // The small terminal QR code is drawn with half blocks.
    expect(stdout).toMatch(/[▀▄█]{10}/)
    expect(stdout).toContain('Linked: a phone is enrolled for "customer-1".')
    expect(stdout).toContain('Reachability: push, 1 device, reachable')
    expect(await h.client.reachability('customer-1')).toMatchObject({
      deliverability: 'push',
      deviceCount: 1,
    })
  }, 60_000)

  it('waits for a new phone when the customer already has one', async () => {
    const h = await start()
    await tapOnPhone((await h.client.enroll('customer-1')).universalLink)
    const run = connect(['customer-1', '--json'], configured(h))
    const [line] = await run.waitFor(/^\{.*\}\n/)
    const enrollment = JSON.parse(line) as Record<string, unknown>
    expect(enrollment).toMatchObject({ type: 'enrollment', externalId: 'customer-1' })
    expect(enrollment).not.toHaveProperty('token')
    await tapOnPhone(String(enrollment.universalLink))
    const { code, stdout, stderr } = await run.done
    expect(code, stderr).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(stdout).not.toMatch(/[▀▄█]/)
    expect(JSON.parse(lines[1] as string)).toMatchObject({
      type: 'reachability',
      linked: true,
      externalId: 'customer-1',
      deliverability: 'push',
      reachable: true,
      deviceCount: 2,
    })
  }, 60_000)

  it('exits 1 with the reachability when nobody taps the link before --timeout', async () => {
    const h = await start()
    const { code, stdout } = await connect(['customer-1', '--timeout', '1'], configured(h)).done
    expect(code).toBe(1)
    expect(stdout).toContain('No phone was linked for "customer-1" within 1 s.')
    expect(stdout).toContain('Reachability: fallback, 0 devices, not reachable\n  Nobody is enrolled')
  }, 60_000)

  it('prints only the link with --no-wait, and the link still enrols the phone afterwards', async () => {
    const h = await start()
    const { code, stdout, stderr } = await connect(['customer-1', '--no-wait', '--json'], configured(h)).done
    expect(code, stderr).toBe(0)
    const lines = stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    const enrollment = JSON.parse(lines[0] as string) as { universalLink: string; expiresInSeconds: number }
    expect(enrollment.expiresInSeconds).toBeGreaterThan(0)
    expect((await h.client.reachability('customer-1')).deviceCount).toBe(0)
    await tapOnPhone(enrollment.universalLink)
    expect((await h.client.reachability('customer-1')).deviceCount).toBe(1)
  }, 60_000)

  it('exits 2 naming PUSHARY_API_KEY when it is not set, before any request', async () => {
    const h = await start()
    const { code, stdout, stderr } = await connect(['customer-1'], { PUSHARY_BASE_URL: h.server.baseUrl })
      .done
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain('no API key: set PUSHARY_API_KEY')
    expect(stderr).toContain('Usage: pushary-mastra connect')
  }, 60_000)

  it('exits 1 naming PUSHARY_API_KEY when the service refuses the key, minting nothing', async () => {
    const h = await start()
    const { code, stdout, stderr } = await connect(['customer-1'], {
      PUSHARY_API_KEY: 'pk_dev_wrong.sk_wrong',
      PUSHARY_BASE_URL: h.server.baseUrl,
    }).done
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/refused the API key \(HTTP 401\): check PUSHARY_API_KEY/)
  }, 60_000)

  it('refuses a blank customer ID and a bad --timeout with exit 2', async () => {
    const h = await start()
    for (const [args, message] of [
      [[' '], /customerId/],
      [['customer-1', '--timeout', '0'], /--timeout must be a whole number/],
      [['customer-1', '--timeout', '5', '--no-wait'], /--timeout has no effect with --no-wait/],
    ] as const) {
      const { code, stderr } = await connect(args, configured(h)).done
      expect(code, args.join(' ')).toBe(2)
      expect(stderr, args.join(' ')).toMatch(message)
    }
  }, 60_000)
})
