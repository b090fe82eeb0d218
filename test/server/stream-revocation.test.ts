/**
 * Issue 19, item 7: revoking a device closes its open event stream at once,
 * and no event reaches a revoked device. The revoke is written through its
 * own database connection, as `pushary-mastra devices revoke` does from
 * another process.
 */
import { pathToFileURL } from 'node:url'
import { createClient } from '@libsql/client'
import { describe, expect, it } from 'vitest'
import { createEnrollmentRepo } from '../../src/server/enrollment-repo.js'
import { serviceFixture } from './service-harness.js'
import { enrollDevice } from './support/devices.js'

const fixture = serviceFixture('stream-revocation')

type Chunk = ReadableStreamReadResult<Uint8Array>
// A read left pending by a timeout is kept for the next call, so no chunk is lost.
const pendingReads = new WeakMap<ReadableStreamDefaultReader<Uint8Array>, Promise<Chunk>>()

/** Reads the stream until `done` or `timeoutMs`; returns everything read and whether it ended. */
async function readUntilEnd(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  timeoutMs: number,
): Promise<{ text: string; ended: boolean }> {
  const decoder = new TextDecoder()
  let text = ''
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const left = deadline - Date.now()
    if (left <= 0) return { text, ended: false }
    const read = pendingReads.get(reader) ?? reader.read()
    pendingReads.set(reader, read)
    const next = await Promise.race([
      read,
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), left)),
    ])
    if (next === 'timeout') return { text, ended: false }
    pendingReads.delete(reader)
    if (next.done) return { text, ended: true }
    text += decoder.decode(next.value, { stream: true })
  }
}

describe('device revocation and open event streams', () => {
  it("closes the revoked device's stream within seconds and sends it no new decision", async () => {
    const h = await fixture.start()
    const device = await enrollDevice(h.client, 'customer_revoked')
    const controller = new AbortController()
    const response = await fetch(`${h.server.url}/review/events`, {
      headers: { cookie: device.cookie, accept: 'text/event-stream' },
      signal: controller.signal,
    })
    expect(response.status).toBe(200)
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    try {
      const first = await readUntilEnd(reader, 500)
      expect(first.text).toContain('event: ready')

      const db = createClient({ url: pathToFileURL(h.dbPath).href })
      try {
        expect(await createEnrollmentRepo(db).revokeDevicesOf('customer_revoked')).toBe(1)
      } finally {
        db.close()
      }
      const created = await h.client.decisions.create({
        question: 'Wire EUR 9,000?',
        externalId: 'customer_revoked',
      })
      const after = await readUntilEnd(reader, 4_000)
      expect(after.ended).toBe(true)
      expect(after.text).not.toContain(created.decisionId)
    } finally {
      controller.abort()
    }
  })

  it('keeps streaming to a device that is still enrolled', async () => {
    const h = await fixture.start()
    const device = await enrollDevice(h.client, 'customer_kept')
    const controller = new AbortController()
    const response = await fetch(`${h.server.url}/review/events`, {
      headers: { cookie: device.cookie },
      signal: controller.signal,
    })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    try {
      await readUntilEnd(reader, 300)
      const created = await h.client.decisions.create({ question: 'Ship?', externalId: 'customer_kept' })
      const after = await readUntilEnd(reader, 2_500)
      expect(after.ended).toBe(false)
      expect(after.text).toContain(created.decisionId)
    } finally {
      controller.abort()
    }
  })
})
