/**
 * The parts of `pg` the PostgreSQL store uses, as structural types: the
 * package never imports `pg`'s types, so any compatible pool works and `pg`
 * stays an optional peer loaded on first use.
 */

/**
 * The part of a `pg` query result the store reads.
 *
 * @example
 * const { rows, rowCount }: PusharyPgResult = await pool.query('SELECT 1')
 */
export interface PusharyPgResult {
  readonly rows: readonly unknown[]
  readonly rowCount: number | null
}

/**
 * The part of a `pg` pool client the store uses (a `pg.PoolClient` is one).
 *
 * @example
 * const client: PusharyPgPoolClient = await new pg.Pool().connect()
 */
export interface PusharyPgPoolClient {
  query(text: string, values?: unknown[]): Promise<PusharyPgResult>
  release(error?: Error | boolean): void
}

/**
 * A named statement as `pg` takes it: prepared once per connection under
 * `name`, then only bound and executed.
 *
 * @example
 * await pool.query({ name: 'one', text: 'SELECT $1::int AS n', values: [1] } satisfies PusharyPgStatement)
 */
export interface PusharyPgStatement {
  readonly name: string
  readonly text: string
  readonly values: unknown[]
}

/**
 * The part of a `pg.Pool` the store uses. Structural, so the published types
 * do not depend on `@types/pg`: a `pg.Pool` satisfies it without a cast.
 *
 * @example
 * const store = createPostgresReviewStore({ pool: new pg.Pool({ connectionString }) satisfies PusharyPgPool })
 */
export interface PusharyPgPool {
  connect(): Promise<PusharyPgPoolClient>
  query(text: string, values?: unknown[]): Promise<PusharyPgResult>
  query(statement: PusharyPgStatement): Promise<PusharyPgResult>
  end(): Promise<void>
}
