/**
 * A phone as the service sees it, over real HTTP: open the enrolment link,
 * tap "Link this phone", keep the device cookie.
 */
import type { PusharyClient } from '../../../src/pushary/client.js'

export interface EnrolledDevice {
  /** `name=value`, ready for a `cookie` header. */
  cookie: string
  /** The raw device token (the cookie's value). */
  token: string
}

/** Taps the enrolment link at `universalLink` and returns the device cookie. */
export async function tapEnrollmentLink(universalLink: string): Promise<EnrolledDevice> {
  const response = await fetch(universalLink, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  })
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const token = cookie.slice(cookie.indexOf('=') + 1)
  if (response.status !== 303 || token === '') {
    throw new Error(`enrolment failed: HTTP ${response.status} ${await response.text()}`)
  }
  return { cookie, token }
}

/** Enrols a new device for `externalId` through the client and the link. */
export async function enrollDevice(client: PusharyClient, externalId: string): Promise<EnrolledDevice> {
  const { universalLink } = await client.enroll(externalId)
  return tapEnrollmentLink(universalLink)
}

/** GET on the reviewer page with a cookie header. */
export async function reviewGet(url: string, cookie: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers: { cookie }, redirect: 'manual' })
  return { status: response.status, text: await response.text() }
}

/**
 * A `fetch` that counts requests and passes them to the real one, so a test
 * can show that validation happened before anything was sent.
 */
export function countingFetch(): { fetch: typeof fetch; count: () => number } {
  let requests = 0
  return {
    fetch: (input, init) => {
      requests += 1
      return fetch(input, init)
    },
    count: () => requests,
  }
}
