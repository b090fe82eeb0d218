/**
 * Issue 9, items 6 and 10: the device cookie's name and attributes on an
 * https public URL, devices that expire when unused, and the
 * `pushary-mastra devices list|revoke` command run as its own process
 * against the database of a running service.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEVICE_IDLE_TTL_SECONDS } from '../../src/server/enrollment-repo.js'
import { nodeScript } from '../helpers/node-script.js'
import { serviceFixture, tempDir } from './service-harness.js'
import { enrollDevice, reviewGet, tapEnrollmentLink } from './support/devices.js'

const ROOT = resolve(import.meta.dirname, '../..')
const fixture = serviceFixture('devices')

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...nodeScript('src/cli/main.ts'), ...args], { cwd: ROOT })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    child.once('close', (code) => done({ code, stdout, stderr }))
  })
}

describe('device cookie on an https public URL (item 6)', () => {
  it('uses a __Host- cookie (Secure, Path=/, no Domain) and ignores a plain one someone else set', async () => {
    const h = await fixture.start({ publicUrl: 'https://approvals.example.test' })
    const { token } = await h.client.enroll('customer_https')
    const tap = await fetch(`${h.server.url}/e/${token}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expect(tap.status).toBe(303)
    const setCookie = tap.headers.get('set-cookie') ?? ''
    expect(setCookie).toMatch(/^__Host-pushary_device=[A-Za-z0-9_-]{32,};/)
    expect(setCookie).toMatch(/; Secure/)
    expect(setCookie).toMatch(/; Path=\//)
    expect(setCookie).not.toMatch(/Domain=/i)
    const value = setCookie.split(';')[0]?.split('=')[1] ?? ''
    expect((await reviewGet(`${h.server.url}/review`, `__Host-pushary_device=${value}`)).status).toBe(200)
    // A non-prefixed cookie can be planted by any page on the host; it names no device here.
    expect((await reviewGet(`${h.server.url}/review`, `pushary_device=${value}`)).status).toBe(401)
  })

  it('refuses a request carrying two device cookies, whichever comes first', async () => {
    const h = await fixture.start()
    const mine = await enrollDevice(h.client, 'customer_two')
    const planted = await enrollDevice(h.client, 'attacker_two')
    for (const cookie of [`${planted.cookie}; ${mine.cookie}`, `${mine.cookie}; ${planted.cookie}`]) {
      const response = await fetch(`${h.server.url}/review/list`, { headers: { cookie } })
      expect(response.status).toBe(400)
      expect(await response.text()).not.toContain('attacker_two')
    }
  })
})

describe('device lifetime and revocation (item 10)', () => {
  it('stops honouring a device unused for longer than its lifetime', async () => {
    let nowMs = Date.parse('2030-01-01T00:00:00Z')
    const h = await fixture.start({ now: () => nowMs })
    const device = await enrollDevice(h.client, 'customer_idle')
    nowMs += (DEVICE_IDLE_TTL_SECONDS - 60) * 1000
    expect((await reviewGet(`${h.server.url}/review`, device.cookie)).status).toBe(200)
    nowMs += (DEVICE_IDLE_TTL_SECONDS + 60) * 1000
    expect((await reviewGet(`${h.server.url}/review`, device.cookie)).status).toBe(401)
    expect((await h.client.reachability('customer_idle')).deviceCount).toBe(0)
  })

  it('lists and revokes devices of a running service from another process', async () => {
    const h = await fixture.start()
    const first = await enrollDevice(h.client, 'customer_a')
    const second = await enrollDevice(h.client, 'customer_a')
    const other = await enrollDevice(h.client, 'customer b')

    const listed = await cli(['devices', 'list', '--db', h.dbPath, '--json'])
    expect(listed.code).toBe(0)
    const devices = JSON.parse(listed.stdout) as Array<{ deviceId: string; externalId: string }>
    expect(devices.map((d) => d.externalId).sort()).toEqual(['customer b', 'customer_a', 'customer_a'])
    // The listing never contains a device's secret.
    for (const device of [first, second, other]) expect(listed.stdout).not.toContain(device.token)
    const table = await cli(['devices', 'list', '--db', h.dbPath, '--external-id', 'customer b'])
    expect(table.stdout).toContain('"customer b"')
    expect(table.stdout).not.toContain('customer_a')

    // Revoking one of the customer's two devices signs out exactly that one.
    const ids = devices.filter((d) => d.externalId === 'customer_a').map((d) => d.deviceId)
    const revoked = await cli(['devices', 'revoke', ids[0] ?? '', '--db', h.dbPath])
    expect(revoked.code).toBe(0)
    const statuses = [
      (await reviewGet(`${h.server.url}/review`, first.cookie)).status,
      (await reviewGet(`${h.server.url}/review`, second.cookie)).status,
    ].sort()
    expect(statuses).toEqual([200, 401])
    expect((await h.client.reachability('customer_a')).deviceCount).toBe(1)

    const byCustomer = await cli(['devices', 'revoke', '--external-id', 'customer b', '--db', h.dbPath])
    expect(byCustomer.code).toBe(0)
    expect((await reviewGet(`${h.server.url}/review`, other.cookie)).status).toBe(401)

    const unknown = await cli(['devices', 'revoke', 'ffffffffffffffff', '--db', h.dbPath])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no device')
    // A revoked device can enrol again through a new link.
    const again = await tapEnrollmentLink((await h.client.enroll('customer b')).universalLink)
    expect((await reviewGet(`${h.server.url}/review`, again.cookie)).status).toBe(200)
  })

  it('reports a missing database without creating one, and exits 2 for bad arguments', async () => {
    const dbPath = join(tempDir('devices-missing'), 'nope.db')
    const missing = await cli(['devices', 'list', '--db', dbPath])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('no service database')
    expect(existsSync(dbPath)).toBe(false)
    expect((await cli(['devices', 'revoke', '--db', dbPath])).code).toBe(2)
    expect((await cli(['devices', 'frobnicate'])).code).toBe(2)
  })
})
