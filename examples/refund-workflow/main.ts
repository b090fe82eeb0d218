/**
 * The main job, end to end on one machine:
 *   npm run demo                      # answer on your phone (or in a browser)
 *   npm run demo -- --answer approve  # unattended: a simulated phone taps the answer
 *   npm run demo -- --answer deny     # also select | input: a choice or a text, never approval
 *   npm run demo -- --agent           # the same refund asked by a Mastra Agent (requireApproval)
 *   npm run demo -- --agent --answer approve|deny|select|input
 *   npm run demo -- --agent --model openai/gpt-4o   # a provider model (its key must be set)
 *   npm run demo -- --expire          # nobody answers; the decision expires
 *   npm run demo -- --approvers alice,bob,carol --required 2   # several approvers (approvers-refund.ts)
 *   npm run demo -- --fresh           # use a temporary database
 *   npm run demo -- --port 4100 --public-url http://192.168.1.20:4100   # phone on the LAN
 *   npm run demo -- --help            # every flag
 *
 * Starts the local decision service on an embedded SQLite file, runs a Mastra
 * workflow that asks one person to approve a refund (approval step, gate,
 * protected refund step), prints the links with QR codes, waits, and reports
 * the outcome. With --agent an agent asks instead (agent-refund.ts). Exit
 * code 0 only when the outcome matches what was asked. Ctrl-C cancels the
 * questions the demo opened before it exits (opened-questions.ts).
 */
import { mkdirSync, mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import {
  createPusharyClient,
  createPusharyDevServer,
  createSqliteReviewStore,
  isPusharyDeclined,
} from '@pushary/mastra'
import { linkSimulatedPhone, type SimulatedPhone, waitForPusharyService } from '@pushary/mastra/testing'
import { waitUntilReachable } from '../shared/local-phone.js'
import { type DemoAnswer, runAgentRefund, UNATTENDED_VALUE } from './agent-refund.js'
import { parseApproversFlags, runApproversRefund } from './approvers-refund.js'
import { createOpenedQuestions } from './opened-questions.js'
import { createRefundApp, createRefundLedger, type RefundOrder } from './refund-app.js'
import { printQr, startProgress } from './terminal.js'

const CUSTOMER_ID = 'demo-customer'

const USAGE = `Usage: npm run demo -- [options]

Runs the refund demo on this machine: starts the local decision service, asks
one person (the customer "${CUSTOMER_ID}") to approve a EUR 48 refund, waits for
the answer and reports the outcome. Exit 0 only when the outcome matches what
was asked. Ctrl-C cancels the questions the demo opened, then exits (130).

Options:
  --answer <answer>   Answer unattended with a simulated phone: approve, deny, select or input
                      (select and input ask a choice or a text, answered "yes": data, never approval)
  --agent             Ask from a Mastra Agent whose refund tool has requireApproval
  --model <p/name>    With --agent: a provider model such as openai/gpt-4o (its key must be set)
  --expire            Nobody answers; the question expires after 3 s and no refund runs
  --approvers <ids>   Ask several people instead, e.g. alice,bob,carol: each links a phone (or a
                      private browser window) and answers on their own card; ends when the set settles
  --required <n>      With --approvers: how many must approve (default all; one denial declines)
  --fresh             Keep the data in a new temporary directory instead of .pushary/
  --port <n>          Port of the local service (default 0: any free port)
  --public-url <url>  Base URL of printed links, e.g. http://192.168.1.20:4100 (binds 0.0.0.0)
  --timeout <s>       Seconds to wait for the phone to be linked and for the answer (default 600)
  --help, -h          Show this message
`

const OPTIONS = {
  answer: { type: 'string' },
  agent: { type: 'boolean', default: false },
  model: { type: 'string' },
  expire: { type: 'boolean', default: false },
  approvers: { type: 'string' },
  required: { type: 'string' },
  fresh: { type: 'boolean', default: false },
  port: { type: 'string', default: '0' },
  'public-url': { type: 'string' },
  timeout: { type: 'string', default: '600' },
  help: { type: 'boolean', short: 'h', default: false },
} as const

/** The unattended answer, tapped on the simulated phone's card as a person would. */
function tapAnswer(phone: SimulatedPhone, decisionId: string, answer: DemoAnswer) {
  const value = UNATTENDED_VALUE[answer]
  switch (answer) {
    case 'approve':
      return phone.approve(decisionId)
    case 'deny':
      return phone.deny(decisionId)
    case 'select':
      return phone.choose(decisionId, value)
    case 'input':
      return phone.type(decisionId, value)
    default: {
      const unknown: never = answer
      throw new Error(`unknown answer ${String(unknown)}`)
    }
  }
}

/** Resolves on the first Ctrl-C; a second one exits at once. */
function firstInterrupt(): Promise<void> {
  return new Promise((interrupted) => {
    process.once('SIGINT', () => {
      process.once('SIGINT', () => process.exit(130))
      interrupted()
    })
  })
}

async function main(): Promise<number> {
  const interrupted = firstInterrupt()
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>
  try {
    parsed = parseArgs({ options: OPTIONS })
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`)
    return 2
  }
  const { values } = parsed
  if (values.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const answers: readonly string[] = ['approve', 'deny', 'select', 'input']
  if (values.answer !== undefined && !answers.includes(values.answer)) {
    process.stderr.write('--answer must be approve, deny, select or input\n')
    return 2
  }
  const answer = values.answer as DemoAnswer | undefined
  if (values.model !== undefined && !values.agent) {
    process.stderr.write('--model needs --agent\n')
    return 2
  }
  if (answer !== undefined && values.expire) {
    process.stderr.write('--answer and --expire cannot be combined\n')
    return 2
  }
  const approvers = parseApproversFlags(values)
  if (typeof approvers === 'string') {
    process.stderr.write(`${approvers}\n`)
    return 2
  }
  const dataDir = values.fresh ? mkdtempSync(join(tmpdir(), 'pushary-demo-')) : resolve('.pushary')
  mkdirSync(dataDir, { recursive: true })
  const out = (line = '') => process.stdout.write(`${line}\n`)

  // 1. The decision service (what the hosted Pushary API is, locally).
  const service = await createPusharyDevServer({
    callbackAddresses: { allowLoopback: true },
    dbPath: join(dataDir, 'demo.db'),
    port: Number(values.port),
    ...(values['public-url'] ? { publicUrl: values['public-url'], host: '0.0.0.0' } : {}),
    onError: () => {},
  })
  // Every question goes through this client, so its fetch knows which ones to cancel on Ctrl-C.
  const questions = createOpenedQuestions()
  const client = createPusharyClient({
    baseUrl: service.baseUrl,
    apiKey: service.apiKey,
    fetch: questions.fetch,
  })
  // The service resolves once it listens; on a loaded machine the first
  // request can still find it not answering. Wait for it (bounded) before
  // linking a phone or asking, so a slow start is a wait, not a failed run.
  await waitForPusharyService(client, { timeoutMs: 30_000 })
  const store = createSqliteReviewStore({ url: `file:${join(dataDir, 'demo-reviews.db')}` })
  const ledger = createRefundLedger(`file:${join(dataDir, 'demo-refunds.db')}`)

  // 2. The application's callback endpoint: the service posts signed answers here.
  let handle: (request: Request) => Promise<Response> = async () => new Response(null, { status: 503 })
  const callbacks = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const headers = new Headers()
      for (const [key, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(key, value)
      handle(
        new Request(`http://127.0.0.1${req.url ?? '/'}`, {
          method: 'POST',
          headers,
          body: Buffer.concat(chunks),
        }),
      )
        .then(async (response) => {
          res.writeHead(response.status, { 'content-type': 'application/json' })
          res.end(await response.text())
        })
        .catch(() => {
          res.writeHead(503)
          res.end()
        })
    })
  })
  await new Promise<void>((done) => callbacks.listen(0, '127.0.0.1', done))
  const address = callbacks.address()
  const callbackUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/pushary/callback`

  const app = createRefundApp({
    client,
    store,
    ledger,
    storageUrl: `file:${join(dataDir, 'demo-mastra.db')}`,
    webhookSecret: service.webhookSecret,
    callbackUrl,
    ...(values.expire ? { expiresInSeconds: 3 } : {}),
    requireReachable: true,
  })
  handle = (request) => app.dispatcher.handleCallback(request)

  const shutdown = async () => {
    await new Promise<void>((done) => callbacks.close(() => done()))
    await store.close()
    ledger.close()
    await service.close()
  }

  const demo = async (): Promise<number> => {
    out('Pushary refund demo')
    out(`  decision service  ${service.url}   (data in ${dataDir})`)
    out()
    if (approvers !== null) {
      return runApproversRefund({
        client,
        publicUrl: service.publicUrl,
        app,
        store,
        ledger,
        flags: approvers,
        answer: answer === 'approve' || answer === 'deny' ? answer : undefined,
        timeoutMs: Number(values.timeout) * 1000,
        out,
      })
    }

    // 3. Connect the reviewer's phone once (enrolment binds a device to the customer ID).
    // Questions are asked with requireReachable: a customer with no linked
    // phone is refused up front instead of being asked into the void.
    let phone: SimulatedPhone | null = null
    if (answer || values.expire) {
      phone = await linkSimulatedPhone(client, CUSTOMER_ID)
      out(`Unattended run: a simulated phone is linked for "${CUSTOMER_ID}".`)
    } else if (!(await client.reachability(CUSTOMER_ID)).reachable) {
      const enrollment = await client.enroll(CUSTOMER_ID)
      out(`Connect your phone as "${CUSTOMER_ID}" (scan or open it, then tap "Link this phone"):`)
      out(`  ${enrollment.universalLink}`)
      printQr(enrollment.universalLink)
      const linking = startProgress('Waiting for the phone to be linked')
      const linked = await waitUntilReachable(client, CUSTOMER_ID, Number(values.timeout) * 1000)
      linking.stop(linked ? 'linked' : 'timed out')
      if (!linked) return 1
    }
    const deadline = Date.now() + Number(values.timeout) * 1000
    const showAsked = (decisionId: string, what: string) => {
      const reviewLink = `${service.publicUrl}/review/${decisionId}`
      out()
      out(`Approval requested: ${what}`)
      out(`  reviewer link  ${reviewLink}`)
      printQr(reviewLink)
      if (answer && phone) {
        const tapping = phone
        setTimeout(() => {
          tapAnswer(tapping, decisionId, answer)
            .then((tap) => {
              if (tap.status !== 'answered')
                process.stderr.write(`the answer was not recorded: ${tap.message}\n`)
            })
            .catch((error: unknown) => {
              process.stderr.write(`could not answer: ${String(error)}\n`)
            })
        }, 1500)
      }
    }

    // 4. Start the workflow: it asks, saves the binding and suspends.
    const order: RefundOrder = {
      orderId: `order-${Date.now().toString(36)}`,
      amountMinor: 4800,
      currency: 'EUR',
      customerId: CUSTOMER_ID,
      ask: answer === 'select' || answer === 'input' ? answer : 'confirm',
    }
    const what = `refund ${(order.amountMinor / 100).toFixed(2)} ${order.currency} for ${order.orderId}`
    if (values.agent) {
      const progress = startProgress(
        answer ? `Agent waiting for the answer (${answer})` : 'Agent waiting for the answer',
      )
      const result = await runAgentRefund({
        dataDir,
        client,
        store,
        ledger,
        order,
        answer,
        model: values.model,
        expiresInSeconds: values.expire ? 3 : 600,
        deadline,
        onAsked: (decisionId) => showAsked(decisionId, `${what} (asked by an agent)`),
      }).finally(() => progress.stop('done'))
      const ok = result.ok && (!values.expire || (result.answerStatus === 'expired' && result.refunds === 0))
      out()
      out(result.summary)
      out(ok ? 'OK: the outcome matches.' : `MISMATCH: refunds executed ${result.refunds}.`)
      return ok ? 0 : 1
    }
    const run = await app.workflow.createRun()
    const started = await run.start({ inputData: order })
    if (started.status !== 'suspended')
      throw new Error(`the workflow did not wait for approval (${started.status})`)
    const review = (await store.listByState('pending', { limit: 1000 })).find((r) => r.runId === run.runId)
    if (!review) throw new Error('the approval binding was not saved')
    showAsked(review.decisionId, what)

    // 5. Wait: callbacks resume the run; reconcile is the fallback when one is lost.
    const progress = startProgress(
      answer ? `Waiting for the answer (${answer})` : 'Waiting for the answer on the phone',
    )
    let state = await app.workflow.getWorkflowRunById(run.runId)
    let lastReconcile = Date.now()
    while (state?.status === 'suspended' || state?.status === 'running') {
      if (Date.now() > deadline) {
        progress.stop('timed out')
        out('No answer before the timeout; the refund was not executed.')
        return 1
      }
      await new Promise((done) => setTimeout(done, 250))
      if (Date.now() - lastReconcile > 3000) {
        lastReconcile = Date.now()
        await app.dispatcher.reconcile({ limit: 50 })
      }
      state = await app.workflow.getWorkflowRunById(run.runId)
    }
    progress.stop('done')

    // 6. Report.
    const refunds = await ledger.count(order.orderId)
    const result = state?.result
    out()
    if (isPusharyDeclined(result)) {
      out(`Outcome: declined (${result.reason}); refunds executed for ${order.orderId}: ${refunds}`)
    } else if (state?.status === 'success') {
      out(
        `Outcome: approved; refund executed ${refunds === 1 ? 'once' : `${refunds} times`} for ${order.orderId}`,
      )
    } else {
      out(`Outcome: run ${state?.status ?? 'missing'}; refunds executed: ${refunds}`)
    }
    const approved = state?.status === 'success' && !isPusharyDeclined(result)
    const expected = answer === 'approve' ? 1 : answer || values.expire ? 0 : approved ? 1 : 0
    const declinedFor = (reason: string) => isPusharyDeclined(result) && result.reason === reason
    const ok =
      refunds === expected &&
      (answer !== 'approve' || approved) &&
      (answer !== 'deny' || declinedFor('denied')) &&
      (answer !== 'select' && answer !== 'input' ? true : declinedFor('not_approved')) &&
      (!values.expire || declinedFor('expired'))
    out(ok ? 'OK: the outcome matches.' : `MISMATCH: expected ${expected} refund(s).`)
    return ok ? 0 : 1
  }

  try {
    return await Promise.race([
      demo(),
      interrupted.then(async () => {
        out()
        out('Interrupted: cancelling the questions this demo opened...')
        const cancelled = await questions.cancelAll(client)
        for (const line of cancelled) out(`  ${line}`)
        if (cancelled.length === 0) out('  none were open.')
        return 130
      }),
    ])
  } finally {
    await shutdown()
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
