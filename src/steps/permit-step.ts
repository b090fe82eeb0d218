/**
 * The protected step with a permit (`withPusharyPermit`): after the verified
 * approval and before the action, the approval is spent at the service for
 * exactly this action (E10); the action runs only on a permit, and what it
 * did is recorded as the permit's receipt (E11). The service's single use is
 * what makes a second host's run of the same approval a refusal even when
 * that host never saw the review store.
 *
 * Order, and the crash windows it leaves: consume → store.recordPermit →
 * action → receipt. A crash before recordPermit leaves a spent permit the
 * store does not know (recovery treats the review as before, `uncertain`);
 * a crash inside the action leaves a permit without a receipt (`uncertain`,
 * "may have started"); a crash after the receipt leaves the outcome at the
 * service, which `recover` reads back and settles without asking anyone.
 *
 * After several approvers the permit is spent on the approval that reached
 * the quorum, once the rest of the set is proven (`permit-approver-set.ts`);
 * the set's `settledBy` is kept beside the permit.
 */
import type { Mastra } from '@mastra/core/mastra'
import { createStep } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import type { PusharyClient } from '../pushary/client.js'
import { type PusharyConfig, resolvePusharyClient } from '../pushary/config.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { idSchema } from '../pushary/identity.js'
import {
  type ConsumeAuthorizationInput,
  consumeAuthorizationInputSchema,
} from '../pushary/platform-schemas.js'
import type { PusharyReviewStore } from '../store/review-store.js'
import { pusharyApprovedAnswerSchema } from './gate-step.js'
import { PUSHARY_GUARD_METADATA_KEY } from './gate-warning.js'
import { permitApproverSet } from './permit-approver-set.js'

/**
 * Request-context key under which the approval step's resume pass names the
 * decision it returned, per approval step ID, for a later permit step.
 *
 * @example
 * requestContext.get(PUSHARY_APPROVED_CONTEXT_KEY) // { 'pushary-approval': 'dec_1' }
 */
export const PUSHARY_APPROVED_CONTEXT_KEY = 'pushary.approved'

/**
 * The action a permit is spent for: it must equal what the decision was
 * created with (the approval step's `subject`), else the service refuses
 * it (`action_mismatch`). The customer is the one who was asked.
 *
 * @example
 * const action: PusharyPermitAction = { toolName: 'refund.create', toolTarget: 'order o-1', parameters: { amountMinor: 4800 } }
 */
export type PusharyPermitAction = Omit<ConsumeAuthorizationInput, 'authorizationId' | 'externalId'>

/**
 * What {@link withPusharyPermit} ends the run with when the service refused
 * the permit: the action did not run. `already_consumed` means another run
 * (or host) holds the permit; `executionState` is what its action did so far.
 *
 * @example
 * if (isPusharyPermitRefused(run.result)) alert(run.result.refusal)
 */
export const pusharyPermitRefusedSchema = z.object({
  outcome: z.literal('refused'),
  refusal: z.enum(['not_authorized', 'action_mismatch', 'expired', 'already_consumed', 'unknown']),
  reason: z.string(),
  decisionId: z.string(),
  executionState: z.enum(['running', 'succeeded', 'failed', 'unknown']).optional(),
  /** Several approvers: the decisions that settled the set (`decisionId` is the last). */
  settledBy: z.array(z.string()).optional(),
})
/** @example const r: PusharyPermitRefused = { outcome: 'refused', refusal: 'expired', reason: '…', decisionId: 'dec_1' } */
export type PusharyPermitRefused = z.infer<typeof pusharyPermitRefusedSchema>

/**
 * @example
 * if (isPusharyPermitRefused(result.result)) console.log('not run:', result.result.refusal)
 */
export function isPusharyPermitRefused(value: unknown): value is PusharyPermitRefused {
  return pusharyPermitRefusedSchema.safeParse(value).success
}

/**
 * What the protected action receives beside its input.
 *
 * @example
 * const execute = async ({ permit }: PusharyPermitContext<unknown>) => payments.refund({ idempotencyKey: permit.permitId })
 */
export interface PusharyPermitContext<TInput, TInit = unknown> {
  inputData: TInput
  /** The run's own input (what `run.start({ inputData })` was given; parsed by `initSchema` when set). */
  initData: TInit
  /**
   * The permit this run holds, and the decision it spent. After several
   * approvers, that decision is the approval that reached the quorum and
   * `settledBy` lists every approval that settled the set (it last).
   */
  permit: { permitId: string; decisionId: string; settledBy?: string[] }
  mastra: Mastra | undefined
  runId: string
  workflowId: string
}

/**
 * Options of {@link withPusharyPermit}. `action` is either fixed or computed
 * from the run: `({ inputData, initData }) => action`, where `initData` is
 * the run's own input (typed by `initSchema`, which also checks it before
 * anything is spent).
 *
 * @example
 * const opts: PusharyPermitOptions<PusharyApprovedAnswer, { refundId: string }, { orderId: string }> = {
 *   id: 'refund', outputSchema, initSchema: z.object({ orderId: z.string() }),
 *   action: ({ initData }) => ({ toolName: 'refund.create', toolTarget: `order ${initData.orderId}` }),
 *   execute: async ({ initData }) => ({ refundId: await payments.refund(initData.orderId) }),
 * }
 */
export interface PusharyPermitOptions<TInput, TOutput, TInit = unknown> {
  /** Mastra step id of the protected step. */
  id: string
  /** The approval step whose decision is spent; default `'pushary-approval'`. */
  approvalStepId?: string
  /** Default {@link pusharyApprovedAnswerSchema}: the step sits after `pusharyGate()`. */
  inputSchema?: z.ZodType<TInput>
  outputSchema: z.ZodType<TOutput>
  /**
   * Schema of the run's input (`initData`): types it for `action` and
   * `execute`, and refuses a run whose input does not fit before the permit
   * is spent. Without it `initData` is `unknown` as Mastra hands it over.
   */
  initSchema?: z.ZodType<TInit>
  /**
   * The exact action about to run, from trusted data (the run's input), never
   * from a model: fixed, or computed per run from the step's input and the
   * run's input. It must equal the `subject` the person approved, else the
   * service refuses the permit (`action_mismatch`) and nothing runs.
   */
  action: PusharyPermitAction | ((context: { inputData: TInput; initData: TInit }) => PusharyPermitAction)
  /** The protected action; runs at most once per approval, and only on a permit. */
  execute(context: PusharyPermitContext<TInput, TInit>): Promise<TOutput>
  /** The receipt's summary of a successful run; default `'succeeded'`. Keep secrets out. */
  summary?: (output: TOutput) => string
}

const SUMMARY_MAX = 200
// Receipt summaries must be storable text: no NUL, no unpaired surrogate.
const short = (text: string) =>
  Array.from(text)
    .filter((char) => char !== '\u0000' && !(char.length === 1 && /[\uD800-\uDFFF]/.test(char)))
    .slice(0, SUMMARY_MAX)
    .join('')

const contextSchema = z.object({
  pushary: z.literal('workflow-step'),
  workflowId: z.string(),
  runId: z.string(),
  stepId: z.string(),
})

function invalid(field: string, message: string): PusharyValidationError {
  return new PusharyValidationError({
    code: 'invalid_options',
    operation: 'withPusharyPermit',
    field,
    message,
  })
}

/**
 * The run's input for the action and the step: parsed by `initSchema` when
 * given (a typed error naming the field, before anything is spent), else as
 * Mastra hands it over.
 */
function readInitData<TInit>(schema: z.ZodType<TInit> | undefined, raw: unknown): TInit {
  if (schema === undefined) return raw as TInit
  const parsed = schema.safeParse(raw)
  if (parsed.success) return parsed.data
  throw PusharyValidationError.fromZod(parsed.error, {
    operation: 'withPusharyPermit',
    code: 'invalid_permit_input',
    fieldPrefix: 'initData',
  })
}

/** The decision this run's approval step returned, proven by the service's copy of its binding. */
async function approvedDecision(
  client: PusharyClient,
  named: unknown,
  where: { workflowId: string; runId: string; stepId: string },
) {
  const decisionId = typeof named === 'string' ? named : null
  if (decisionId === null) {
    throw invalid(
      'approvalStepId',
      `before the action: no approval step "${where.stepId}" returned an answer in this run; place the permit step after pusharyApprovalStep and pusharyGate() in the same workflow`,
    )
  }
  const decision = await client.decisions.get(decisionId)
  let context: unknown = null
  try {
    context = JSON.parse(decision.context ?? 'null')
  } catch {
    context = null
  }
  const bound = contextSchema.safeParse(context)
  // A request context is caller-settable: only a decision whose own binding
  // names this very run and step may be spent here.
  if (
    !bound.success ||
    bound.data.workflowId !== where.workflowId ||
    bound.data.runId !== where.runId ||
    bound.data.stepId !== where.stepId
  ) {
    throw invalid(
      'approvalStepId',
      `before the action: decision ${decisionId} was not asked by this run's step "${where.stepId}"`,
    )
  }
  return decision
}

/**
 * Wraps a protected action as a Mastra step that spends the approval once
 * (a permit from the service for exactly `action`) before it runs, and
 * records what it did as the permit's receipt. A refused permit ends the run
 * (status `success`) with a {@link PusharyPermitRefused} result and the
 * action never runs; a throwing action records `failed` and rethrows.
 * With a `store`, the permit is kept on the review, so `recover` can settle
 * a crash after the receipt without asking anyone.
 *
 * The action is usually computed per run from the run's input (`initData`,
 * typed and checked by `initSchema`), so one workflow serves every order;
 * a fixed `action` suits a workflow that only ever does one thing.
 *
 * @example
 * const refundRequest = z.object({ orderId: z.string(), amountMinor: z.number().int() })
 * const refund = withPusharyPermit({ client, store }, {
 *   id: 'refund', outputSchema: z.object({ refundId: z.string() }), initSchema: refundRequest,
 *   action: ({ initData }) => ({ toolName: 'refund.create', toolTarget: `order ${initData.orderId}` }),
 *   execute: async ({ initData }) => ({ refundId: await payments.refund(initData.orderId) }),
 * })
 * wf.then(pusharyApprovalStep(config)).then(pusharyGate()).then(refund).commit()
 */
export function withPusharyPermit<
  TInput = z.infer<typeof pusharyApprovedAnswerSchema>,
  TOutput = unknown,
  TInit = unknown,
>(
  config: PusharyConfig & { store?: PusharyReviewStore | undefined },
  options: PusharyPermitOptions<TInput, TOutput, TInit>,
) {
  const stepId = idSchema.safeParse(options?.id)
  if (!stepId.success) throw invalid('opts.id', 'the protected step needs an id')
  const approvalStepId = idSchema.default('pushary-approval').safeParse(options.approvalStepId)
  if (!approvalStepId.success) throw invalid('opts.approvalStepId', 'not a step id')
  if (typeof options.execute !== 'function') throw invalid('opts.execute', 'the protected action is missing')
  const initSchema = options.initSchema
  if (initSchema !== undefined && typeof (initSchema as { safeParse?: unknown })?.safeParse !== 'function') {
    throw invalid('opts.initSchema', 'a zod schema of the run input')
  }
  if (typeof options.action !== 'function') {
    const parsed = consumeAuthorizationInputSchema
      .omit({ authorizationId: true, externalId: true })
      .safeParse(options.action)
    if (!parsed.success) {
      throw PusharyValidationError.fromZod(parsed.error, {
        operation: 'withPusharyPermit',
        code: 'invalid_permit_input',
        fieldPrefix: 'opts.action',
      })
    }
  }
  const client = resolvePusharyClient(config, 'withPusharyPermit')
  const store = config.store
  const inputSchema = (options.inputSchema ?? pusharyApprovedAnswerSchema) as z.ZodType<TInput>

  return createStep({
    id: stepId.data,
    description: 'Spend the approval once for exactly this action, run it, and record its receipt.',
    metadata: { [PUSHARY_GUARD_METADATA_KEY]: 'permit' },
    inputSchema,
    outputSchema: options.outputSchema,
    execute: async ({
      inputData,
      getInitData,
      getStepResult,
      requestContext,
      bail,
      mastra,
      runId,
      workflowId,
    }) => {
      const initData = readInitData(initSchema, getInitData())
      const action =
        typeof options.action === 'function'
          ? options.action({ inputData: inputData as TInput, initData })
          : options.action
      const approved = requestContext?.get(PUSHARY_APPROVED_CONTEXT_KEY as never) as
        | Record<string, unknown>
        | undefined
      const where = { workflowId, runId, stepId: approvalStepId.data }
      const decision = await approvedDecision(client, approved?.[approvalStepId.data], where)
      const decisionId = decision.decisionId
      // Several approvers: one permit, on the approval that reached the
      // quorum, once the rest of the set is proven at the service.
      const set = await permitApproverSet(
        client,
        decision,
        getStepResult(approvalStepId.data),
        where,
        action.parameters,
      )
      const settledBy = set ? { settledBy: set.settledBy } : {}
      const request = {
        ...action,
        ...(set ? { parameters: set.parameters } : {}),
        authorizationId: decisionId,
        ...(decision.externalId === null ? {} : { externalId: decision.externalId }),
      }
      // Checked here too, so a bad action from the function is a typed error before the request.
      const body = consumeAuthorizationInputSchema.safeParse(request)
      if (!body.success) {
        throw PusharyValidationError.fromZod(body.error, {
          operation: 'withPusharyPermit',
          code: 'invalid_permit_input',
          fieldPrefix: 'action',
        })
      }
      const log = mastra?.getLogger()
      const consumed = await client.consumeAuthorization(body.data)
      if (consumed.status !== 'permitted') {
        log?.warn(
          `[pushary] permit refused (${consumed.refusal}) for decision ${decisionId}; "${stepId.data}" did not run: ${consumed.reason}`,
        )
        const refused: PusharyPermitRefused = {
          outcome: 'refused',
          refusal: consumed.refusal,
          reason: consumed.reason,
          decisionId,
          ...(consumed.executionState === undefined ? {} : { executionState: consumed.executionState }),
          ...settledBy,
        }
        return bail(refused)
      }
      const { permitId } = consumed
      const { authorizationId: _spent, ...spentAction } = body.data
      if (store) {
        try {
          await store.recordPermit(decisionId, {
            permitId,
            action: spentAction,
            consumedAt: new Date().toISOString(),
            ...settledBy,
          })
        } catch (error) {
          // Fail closed: an action the store cannot account for does not run.
          await client.recordReceipt(permitId, {
            outcome: 'failed',
            summary: 'not run: the review store refused the permit',
          })
          throw error
        }
      }
      let output: TOutput
      try {
        output = await options.execute({
          inputData: inputData as TInput,
          initData,
          permit: { permitId, decisionId, ...settledBy },
          mastra,
          runId,
          workflowId,
        })
      } catch (error) {
        await client.recordReceipt(permitId, {
          outcome: 'failed',
          summary: short(error instanceof Error ? error.message : String(error)),
        })
        log?.warn(`[pushary] "${stepId.data}" failed under permit ${permitId}; receipt recorded as failed`)
        throw error
      }
      await client.recordReceipt(permitId, {
        outcome: 'succeeded',
        summary: short(options.summary?.(output) ?? 'succeeded'),
      })
      log?.info(
        `[pushary] "${stepId.data}" ran once under permit ${permitId} (decision ${decisionId}${
          set ? `; the approvers' set was settled by ${set.settledBy.join(', ')}` : ''
        })`,
      )
      return output
    },
  })
}
