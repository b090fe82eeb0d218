/**
 * `pushary-mastra reviews show --mastra-pg` for an app that keeps Mastra in
 * its own PostgreSQL schema (`PostgresStore({ schemaName })`), as an operator
 * runs it: a real OS process, a real Mastra run stored in that schema on the
 * real PostgreSQL, its review in a SQLite store. With the schema the run is
 * found with its status; without it the command says where it looked, never
 * a bare "absent"; it never creates a schema it was pointed at by mistake.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Mastra } from '@mastra/core/mastra'
import { createWorkflow } from '@mastra/core/workflows'
import { PostgresStore } from '@mastra/pg'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod/v4'
import { pusharyApprovalStepInputSchema } from '../../src/steps/approval-schemas.js'
import { pusharyApprovalStep } from '../../src/steps/approval-step.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { createSqliteReviewStore } from '../../src/store/sqlite-store.js'
import { pusharyPendingDecisions } from '../../src/workflows/pending-decisions.js'
import { createTestEnv, type TestEnv } from '../helpers/mastra.js'
import { jsonOf, runCli } from '../reliability/support/cli.js'
import { ensurePostgres, type TestPostgres } from '../store/support/postgres.js'

let env: TestEnv
let postgres: TestPostgres
let store: PusharyReviewStore
let storage: PostgresStore
let reviewsDb: string
/** A database of this file's own, so what its `public` schema holds is known. */
let databaseUrl: string
let database: string
let decisionId: string
const appSchema = `app_mastra_${process.pid}`

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgres.connectionString })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  postgres = await ensurePostgres()
  database = `pushary_cli_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  await admin((client) => client.query(`CREATE DATABASE "${database}"`))
  const url = new URL(postgres.connectionString)
  url.pathname = `/${database}`
  databaseUrl = url.toString()

  env = await createTestEnv('reviews-mastra-schema')
  const dir = mkdtempSync(join(tmpdir(), 'pushary-reviews-schema-'))
  reviewsDb = join(dir, 'reviews.db')
  store = createSqliteReviewStore({ url: `file:${reviewsDb}` })
  const deploy = createWorkflow({
    id: 'deploy',
    inputSchema: pusharyApprovalStepInputSchema,
    outputSchema: z.unknown(),
    options: { autoRestartActiveRuns: false },
  })
    .then(pusharyApprovalStep({ client: env.client, store }, { id: 'approve', externalId: 'customer_1' }))
    .commit()
  // The app keeps Mastra in its own schema, as `PostgresStore({ schemaName })` lets it.
  storage = new PostgresStore({ id: 'app', connectionString: databaseUrl, schemaName: appSchema })
  const mastra = new Mastra({ storage, workflows: { deploy }, logger: false })
  const run = await mastra.getWorkflow('deploy').createRun()
  const [pending] = pusharyPendingDecisions(
    await run.start({ inputData: { operationId: 'deploy:v7', question: 'Deploy v7?', type: 'confirm' } }),
  )
  decisionId = pending!.decisionId
}, 120_000)

afterAll(async () => {
  await store?.close()
  await storage?.close().catch(() => undefined)
  await env?.close()
  if (database) {
    await admin((client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`))
  }
  await postgres?.stop()
})

const show = (...extra: string[]) =>
  runCli(['reviews', 'show', decisionId, '--db', reviewsDb, '--mastra-pg', databaseUrl, ...extra])

describe('reviews show against Mastra in its own PostgreSQL schema', () => {
  it('finds the run in the schema named by --mastra-pg-schema, with its status and its approval step', async () => {
    const json = await show('--mastra-pg-schema', appSchema, '--json')
    expect(json.code, json.stderr).toBe(0)
    expect(jsonOf<{ run: unknown }>(json).run).toMatchObject({
      workflowId: 'deploy',
      status: 'suspended',
      approval: 'suspended',
      lookedIn: `PostgreSQL schema "${appSchema}"`,
    })
    const text = await show('--mastra-pg-schema', appSchema)
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(
      new RegExp(
        `run +deploy/\\S+: suspended, approval step suspended \\(in PostgreSQL schema "${appSchema}"\\)`,
      ),
    )
  })

  it('without the flag says it looked in public and how to name the app’s schema, instead of a bare "absent"', async () => {
    // public holds no Mastra tables in this database: the read is refused, naming where.
    const empty = await show()
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain(`cannot read Mastra's runs in PostgreSQL schema "public"`)
    expect(empty.stderr).toContain('--mastra-pg-schema <name>')
    expect(empty.stdout).not.toContain('absent')

    // public holds Mastra's tables (another app's, or an old default) but not this run.
    const other = new PostgresStore({ id: 'other', connectionString: databaseUrl })
    await other.init()
    await other.close()
    const absent = await show()
    expect(absent.code, absent.stderr).toBe(0)
    expect(absent.stdout).toMatch(
      /run +deploy\/\S+: absent from PostgreSQL schema "public"; if your app gives PostgresStore another schemaName, pass it as --mastra-pg-schema <name>/,
    )
    const json = await show('--json')
    expect(jsonOf<{ run: unknown }>(json).run).toMatchObject({
      status: 'absent',
      lookedIn: 'PostgreSQL schema "public"',
    })
  })

  it('reads only: a mistyped schema is refused by name and never created', async () => {
    const typo = `${appSchema}_typo`
    const refused = await show('--mastra-pg-schema', typo)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`PostgreSQL schema "${typo}"`)
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [typo])
      expect(found.rowCount).toBe(0)
    } finally {
      await client.end()
    }
  })

  it('refuses a schema flag that is not a PostgreSQL name, or without --mastra-pg, naming the flag', async () => {
    const bad = await show('--mastra-pg-schema', 'app; DROP TABLE x')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--mastra-pg-schema must be a PostgreSQL schema name')
    const alone = await runCli([
      'reviews',
      'show',
      decisionId,
      '--db',
      reviewsDb,
      '--mastra-pg-schema',
      appSchema,
    ])
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain('--mastra-pg-schema applies to --mastra-pg only')
    const help = await runCli(['reviews', '--help'])
    expect(help.stdout).toContain('--mastra-pg-schema <name>')
  })
})
