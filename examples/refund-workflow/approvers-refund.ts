/**
 * The demo with several approvers:
 *   npm run demo -- --approvers alice,bob,carol --required 2
 *   npm run demo -- --approvers alice,bob,carol --required 2 --answer approve|deny
 *
 * The same refund workflow, asked of every approver on their own decision
 * (the step's `approvers` input). The first `required` approvals settle it;
 * one denial declines it (the default veto). Either way the still-open
 * questions are withdrawn, and each phone's card says how the set stands and
 * why a withdrawn question left. Interactive: every approver links a phone or
 * a browser (a private window per approver works on one computer) through
 * their own enrolment link, then answers on their own card. Unattended
 * (`--answer`): a simulated phone per approver taps the answers, one after
 * another. The demo finishes when the set settles.
 */
import type { PusharyClient, PusharyReviewStore } from '@pushary/mastra'
import { isPusharyDeclined } from '@pushary/mastra'
import { linkSimulatedPhone, type SimulatedPhone } from '@pushary/mastra/testing'
import { waitUntilReachable } from '../shared/local-phone.js'
import type { createRefundApp, RefundLedger, RefundOrder } from './refund-app.js'
import { printQr, startProgress } from './terminal.js'

/** The set the flags name: who is asked and how many must approve. */
export interface ApproversFlags {
  readonly approvers: readonly string[]
  readonly required: number
}

/**
 * Reads `--approvers` and `--required`; a string is the refusal to print (exit 2).
 *
 * @example
 * parseApproversFlags({ approvers: 'alice,bob,carol', required: '2' }) // { approvers: [...], required: 2 }
 */
export function parseApproversFlags(values: {
  approvers?: string | undefined
  required?: string | undefined
  agent?: boolean | undefined
  expire?: boolean | undefined
  answer?: string | undefined
}): ApproversFlags | string | null {
  if (values.approvers === undefined) {
    return values.required === undefined ? null : '--required needs --approvers'
  }
  const approvers = values.approvers
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '')
  if (approvers.length === 0) return '--approvers needs at least one name, e.g. alice,bob,carol'
  if (new Set(approvers).size !== approvers.length) return '--approvers names someone twice'
  const required = values.required === undefined ? approvers.length : Number(values.required)
  if (!Number.isSafeInteger(required) || required < 1 || required > approvers.length) {
    return `--required must be a whole number from 1 to ${approvers.length} (the approvers named)`
  }
  if (values.agent) return '--approvers asks from the workflow; it cannot be combined with --agent'
  if (values.expire) return '--approvers cannot be combined with --expire'
  if (values.answer !== undefined && values.answer !== 'approve' && values.answer !== 'deny') {
    return '--approvers asks a yes/no question: --answer must be approve or deny'
  }
  return { approvers, required }
}

/** What the approvers' demo runs on: the demo's service, app and files. */
export interface ApproversDemoInput {
  readonly client: PusharyClient
  readonly publicUrl: string
  readonly app: ReturnType<typeof createRefundApp>
  readonly store: PusharyReviewStore
  readonly ledger: RefundLedger
  readonly flags: ApproversFlags
  readonly answer: 'approve' | 'deny' | undefined
  readonly timeoutMs: number
  readonly out: (line?: string) => void
}

/** Links a phone for every approver: simulated when unattended, else each person's own through their link. */
async function linkPhones(input: ApproversDemoInput): Promise<Map<string, SimulatedPhone> | null> {
  const { client, flags, out } = input
  const phones = new Map<string, SimulatedPhone>()
  if (input.answer) {
    for (const id of flags.approvers) phones.set(id, await linkSimulatedPhone(client, id))
    out(`Unattended run: a simulated phone is linked for each approver (${flags.approvers.join(', ')}).`)
    return phones
  }
  const waiting: string[] = []
  for (const id of flags.approvers) {
    if ((await client.reachability(id)).reachable) continue
    const enrollment = await client.enroll(id)
    out(`Connect a phone or a browser as "${id}" (open it, then tap "Link this phone"):`)
    out(`  ${enrollment.universalLink}`)
    printQr(enrollment.universalLink)
    waiting.push(id)
  }
  if (waiting.length > 0) {
    out('One device per approver: on one computer, open each link in its own private window.')
    const linking = startProgress(`Waiting for ${waiting.join(', ')} to be linked`)
    for (const id of waiting) {
      if (!(await waitUntilReachable(client, id, input.timeoutMs))) {
        linking.stop(`timed out waiting for ${id}`)
        return null
      }
    }
    linking.stop('linked')
  }
  return phones
}

/** Unattended answers, a moment apart so each card's count moves: approvals up to the quorum, or one denial. */
function tapAnswers(
  phones: Map<string, SimulatedPhone>,
  decisions: Map<string, string>,
  answer: 'approve' | 'deny',
  required: number,
): void {
  const order = [...decisions.keys()]
  const tappers = answer === 'approve' ? order.slice(0, required) : order.slice(0, 1)
  tappers.forEach((externalId, index) => {
    setTimeout(
      () => {
        const phone = phones.get(externalId)
        const decisionId = decisions.get(externalId)
        if (!phone || !decisionId) return
        const tap = answer === 'approve' ? phone.approve(decisionId) : phone.deny(decisionId)
        tap
          .then((result) => {
            if (result.status !== 'answered')
              process.stderr.write(`${externalId}'s answer was not recorded: ${result.message}\n`)
          })
          .catch((error: unknown) =>
            process.stderr.write(`${externalId} could not answer: ${String(error)}\n`),
          )
      },
      1500 * (index + 1),
    )
  })
}

/** What became of one approver's question, in words. */
function approverOutcome(decision: { status: string; value?: string | null | undefined }): string {
  switch (decision.status) {
    case 'answered':
      return `answered ${JSON.stringify(decision.value ?? '')}`
    case 'cancelled':
      return 'withdrawn (the set was settled)'
    default:
      return decision.status
  }
}

/**
 * Runs the refund with several approvers and reports it. Exit code 0 only
 * when the outcome matches: approved with one refund, or declined with none.
 *
 * @example
 * return runApproversRefund({ client, publicUrl, app, store, ledger, flags, answer, timeoutMs, out })
 */
export async function runApproversRefund(input: ApproversDemoInput): Promise<number> {
  const { app, store, ledger, flags, out } = input
  const phones = await linkPhones(input)
  if (phones === null) return 1
  const deadline = Date.now() + input.timeoutMs
  const order: RefundOrder = {
    orderId: `order-${Date.now().toString(36)}`,
    amountMinor: 4800,
    currency: 'EUR',
    customerId: flags.approvers[0] as string,
    ask: 'confirm',
    approvers: { externalIds: [...flags.approvers], required: flags.required },
  }
  const run = await app.workflow.createRun()
  const started = await run.start({ inputData: order })
  if (started.status !== 'suspended')
    throw new Error(`the workflow did not wait for approval (${started.status})`)
  const reviews = (await store.listByState('pending', { limit: 1000 })).filter(
    (review) => review.runId === run.runId,
  )
  const decisions = new Map<string, string>()
  for (const id of flags.approvers) {
    const review = reviews.find((r) => 'externalId' in r && r.externalId === id)
    if (review) decisions.set(id, review.decisionId)
  }
  if (decisions.size !== flags.approvers.length) throw new Error('not every approver was asked')

  const width = Math.max(...flags.approvers.map((id) => id.length))
  out()
  out(
    `Approval requested: refund 48.00 EUR for ${order.orderId}, from ${flags.required} of ${flags.approvers.length} approvers (one denial declines)`,
  )
  for (const [id, decisionId] of decisions)
    out(`  ${id.padEnd(width)}  reviewer link  ${input.publicUrl}/review/${decisionId}`)
  out(
    'Each card counts the answers live; once the set settles, the other questions are withdrawn and say why.',
  )
  if (input.answer) tapAnswers(phones, decisions, input.answer, flags.required)

  const progress = startProgress(
    input.answer ? `Waiting for the set to settle (${input.answer})` : 'Waiting for the approvers',
  )
  let state = await app.workflow.getWorkflowRunById(run.runId)
  let lastReconcile = Date.now()
  while (state?.status === 'suspended' || state?.status === 'running') {
    if (Date.now() > deadline) {
      progress.stop('timed out')
      out('The set did not settle before the timeout; the refund was not executed.')
      return 1
    }
    await new Promise((done) => setTimeout(done, 250))
    // Callbacks resume the run; reconcile is the fallback when one is lost.
    if (Date.now() - lastReconcile > 3000) {
      lastReconcile = Date.now()
      await app.dispatcher.reconcile({ limit: 50 })
    }
    state = await app.workflow.getWorkflowRunById(run.runId)
  }
  progress.stop('settled')

  const refunds = await ledger.count(order.orderId)
  const result = state?.result
  const approved = state?.status === 'success' && !isPusharyDeclined(result)
  out()
  if (isPusharyDeclined(result)) {
    out(`Outcome: declined (${result.reason}); refunds executed for ${order.orderId}: ${refunds}`)
  } else if (approved) {
    out(
      `Outcome: approved; refund executed ${refunds === 1 ? 'once' : `${refunds} times`} for ${order.orderId}`,
    )
  } else {
    out(`Outcome: run ${state?.status ?? 'missing'}; refunds executed: ${refunds}`)
  }
  for (const [id, decisionId] of decisions) {
    out(`  ${id.padEnd(width)}  ${approverOutcome(await input.client.decisions.get(decisionId))}`)
  }
  const expected = approved ? 1 : 0
  const ok =
    refunds === expected &&
    (input.answer !== 'approve' || approved) &&
    (input.answer !== 'deny' || (isPusharyDeclined(result) && result.reason === 'denied'))
  out(ok ? 'OK: the outcome matches.' : `MISMATCH: expected ${expected} refund(s).`)
  return ok ? 0 : 1
}
