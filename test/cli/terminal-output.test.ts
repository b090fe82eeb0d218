/**
 * Every line a command prints goes through the terminal rule: rows read from
 * a tampered service database (escape sequences, C1 controls, bidi controls,
 * newlines) are printed visibly escaped, one row per line, in text and JSON.
 * And the service refuses such a customer ID at `/enroll`, as it does for a
 * decision, so it never reaches the `dev` terminal in the first place.
 */
import { Writable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { runDeliveriesCommand } from '../../src/cli/deliveries-command.js'
import { runDevicesCommand } from '../../src/cli/devices-command.js'
import { serviceFixture } from '../server/service-harness.js'

const service = serviceFixture('terminal-output')

// What a terminal acts on: C0 (but the line feed the command writes), DEL,
// C1, and the bidi controls that reorder a line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

const HOSTILE = 'evil\u001b[2J\u001b]52;c;Zm9v\u0007\u009b31m\u202Eplh\nforged row'

async function run(
  command: (argv: readonly string[], io: { stdout: Writable; stderr: Writable }) => Promise<number>,
  argv: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = []
  const err: string[] = []
  const sink = (chunks: string[]) =>
    new Writable({
      write(chunk, _encoding, done) {
        chunks.push(String(chunk))
        done()
      },
    })
  const code = await command(argv, { stdout: sink(out), stderr: sink(err) })
  return { code, stdout: out.join(''), stderr: err.join('') }
}

describe('terminal output', () => {
  it('prints tampered device and delivery rows escaped, one row per line, in text and JSON', async () => {
    const h = await service.start()
    const dbPath = h.dbPath
    await h.close()
    const db = createClient({ url: pathToFileURL(dbPath).href })
    const at = new Date().toISOString()
    await db.execute({
      sql: 'INSERT INTO devices (token_hash, external_id, created_at, last_seen_at) VALUES (?, ?, ?, ?)',
      args: ['a'.repeat(64), HOSTILE, at, at],
    })
    await db.execute({
      sql: `INSERT INTO callback_deliveries (decision_id, event, url, body, state, attempts, next_attempt_ms, created_at, last_error)
            VALUES (?, ?, ?, '{}', 'failed', 1, 0, ?, ?)`,
      args: [
        `dec_${HOSTILE}`,
        `decision.answered${HOSTILE}`,
        `https://hooks.example.com/${HOSTILE}`,
        at,
        HOSTILE,
      ],
    })
    await db.execute({
      sql: 'INSERT INTO callback_attempts (delivery_id, attempt, at, status_code, error, ok) VALUES (1, 1, ?, 500, ?, 0)',
      args: [`${at}${HOSTILE}`, HOSTILE],
    })
    db.close()

    const devices = await run(runDevicesCommand, ['list', '--db', dbPath])
    const deliveries = await run(runDeliveriesCommand, ['list', '--db', dbPath])
    for (const printed of [devices, deliveries]) {
      expect(printed.code).toBe(0)
      expect(printed.stdout).not.toMatch(RAW_CONTROL)
      expect(printed.stdout).toContain('\\u001b[2J')
      expect(printed.stdout).toContain('\\u009b31m')
      expect(printed.stdout).toContain('\\u202e')
      // The row's newline is shown, not obeyed: nothing starts a line with it.
      expect(printed.stdout.split('\n').filter((line) => line.startsWith('forged row'))).toEqual([])
    }
    expect(devices.stdout.trimEnd().split('\n')).toHaveLength(2)

    for (const command of [runDevicesCommand, runDeliveriesCommand]) {
      const json = await run(command, ['list', '--db', dbPath, '--json'])
      expect(json.stdout).not.toMatch(RAW_CONTROL)
      expect(json.stdout.trimEnd().split('\n')).toHaveLength(1)
      expect(JSON.stringify(JSON.parse(json.stdout))).toContain(JSON.stringify(HOSTILE).slice(1, -1))
    }
  })

  it.each([
    ['a bidi override', 'victim\u202Eevil'],
    ['a C1 control', 'victim\u009b31m'],
    ['an escape sequence', 'victim\u001b[2J'],
    ['a carriage return', 'victim\rforged'],
  ])('refuses a customer ID with %s at /enroll, as for a decision, naming the field', async (_what, id) => {
    const h = await service.start()
    const enrolled = await h.api('POST', '/enroll', { externalId: id })
    expect(enrolled.status).toBe(400)
    expect(enrolled.json).toMatchObject({ code: 'invalid_request', field: 'externalId' })
    const asked = await h.api('POST', '/decisions', { question: 'Refund?', externalId: id })
    expect(asked.status).toBe(400)
    expect(asked.json).toMatchObject({ field: 'externalId' })
    // The client refuses it before any request.
    await expect(h.client.enroll(id)).rejects.toMatchObject({
      code: 'invalid_external_id',
      field: 'externalId',
    })
  })
})
