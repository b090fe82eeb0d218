/**
 * What the docs samples run against: the local decision service over
 * loopback HTTP (its URL, key and webhook secret in the PUSHARY_* variables
 * the samples read), a loopback server for the sample workflows'
 * `callbackUrl`, and the application module `samples/app.ts`. A sample module
 * runs when imported; `runSample` imports it under a fresh query string, so
 * each call is a fresh run.
 */
import { createTestEnv, startFetchServer, type TestEnv } from '../../helpers/mastra.js'

type App = typeof import('../samples/app.js')

export interface SampleEnv {
  env: TestEnv
  app: App
  /** The customer's phone opens the enrollment link and taps "Link this phone". */
  linkPhone(customer: string): Promise<void>
  runSample<T>(name: string): Promise<T>
  close(): Promise<void>
}

let runs = 0

export async function startSampleEnv(name: string): Promise<SampleEnv> {
  const env = await createTestEnv(name)
  const callbacks = await startFetchServer(async () => new Response('ok'))
  process.env.PUSHARY_API_KEY = env.apiKey
  process.env.PUSHARY_BASE_URL = env.baseUrl
  process.env.PUSHARY_WEBHOOK_SECRET = env.webhookSecret
  process.env.README_WEBHOOK_SECRET = env.webhookSecret
  process.env.README_PUBLIC_URL = callbacks.url
  process.env.README_SAMPLES_DIR = env.dir
  const app = await import('../samples/app.js')
  return {
    env,
    app,
    async linkPhone(customer) {
      const { universalLink } = await env.client.enroll(customer)
      const response = await fetch(universalLink, { method: 'POST', redirect: 'manual' })
      await response.body?.cancel()
      if (response.status !== 303) throw new Error(`linking ${customer} answered ${response.status}`)
    },
    runSample<T>(sample: string) {
      const specifier = `../samples/${sample}.js?run=${++runs}`
      return import(/* @vite-ignore */ specifier) as Promise<T>
    },
    async close() {
      app.reviewStore.close()
      await callbacks.close()
      await env.close()
    },
  }
}
