import { SqlError } from "@effect/sql/SqlError"
import { waitPhases } from "../services/WaitProbe.js"
import { deadlineError } from "./StatementDeadline.js"

/**
 * node-postgres's pool with a deadline on every statement, and a fence for the statements that
 * passed theirs.
 *
 * A statement that passes its deadline (or whose fiber is interrupted) is *abandoned*: its
 * connection is destroyed and never reused (a stalled connection would otherwise be handed to the
 * next caller and stall it too), and its backend's pid is remembered. The statement may still
 * commit: it may sit in the backend's socket buffer, or in the network, until the server wakes.
 * So before the next statement runs, on whatever connection, the pool *fences* the abandoned
 * backends: it terminates them (`pg_terminate_backend`) and waits until they are gone from
 * `pg_stat_activity`, which a backend leaves only after its transaction has committed or rolled
 * back. From then on the outcome of every abandoned statement is settled and visible: a read that
 * follows an abandoned write sees either all of it or none of it, and never sees it change later.
 * The engine relies on this to reload an RFQ whose write's outcome it does not know.
 *
 * Everything runs inside one timer per statement: waiting for a connection, the fence, the
 * statement. When the timer fires the caller is answered at once with a `StatementDeadlineExceeded`
 * cause, whatever the server or the network does.
 *
 * Over 300 lines on purpose: the deadline, the abandon and the fence are one protocol over one
 * pool; apart, the invariant below would span files.
 */

/** The few parts of node-postgres used here (the package ships no type declarations). */
export interface PgQuery {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
  readonly rowMode?: "array"
  /** A prepared statement's name: the connection parses `text` once, then only binds it. */
  readonly name?: string
}
export interface PgResult {
  readonly rows: Array<any>
}
export interface PgPoolClient {
  readonly processID: number | null
  readonly connection: { readonly stream: { destroy(): void } }
  query(query: PgQuery, callback: (error: Error | null, result: PgResult | Array<PgResult>) => void): void
  release(error?: Error): void
  getTransactionStatus(): string | null
  on(event: "error", listener: (error: Error) => void): void
}
export interface PgPool {
  connect(callback: (error: Error | undefined, client: PgPoolClient | undefined) => void): void
  end(): Promise<void>
  on(event: "error", listener: (error: Error) => void): void
}

type Callback<A> = (error: SqlError | undefined, value?: A) => void

// Server errors (a constraint, a syntax error) carry a severity; anything else is the connection's.
const isServerError = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "severity" in error

const statementError = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

const withListener = new WeakSet<PgPoolClient>()

/** A client checked out of the pool, until it goes back (finished) or is destroyed (abandoned). */
export class Lease {
  /** A statement of this lease is on the wire (sent, not yet answered). */
  inFlight = false
  over = false
  broken = false
  /**
   * Statements given to this lease while another was on the wire, in order. A connection runs one
   * statement at a time; leaving the queue to node-postgres (deprecated) would also leave
   * `inFlight` false while a later statement is on the wire, so abandoning it would skip the
   * fence and let it commit after the pool had moved on.
   */
  private readonly waiting: Array<() => void> = []
  constructor(
    readonly client: PgPoolClient,
    private readonly onAbandon: (pid: number) => void
  ) {
    // A connection that fails while checked out must not throw from an EventEmitter.
    if (!withListener.has(client)) {
      withListener.add(client)
      client.on("error", () => undefined)
    }
  }

  /** Runs `start` (which sends one statement) once no other statement of this lease is on the wire. */
  whenFree(start: () => void): void {
    if (this.inFlight || this.waiting.length > 0) this.waiting.push(start)
    else start()
  }

  /** The statement on the wire was answered (or none was sent): the next waiting one goes. */
  next(): void {
    this.inFlight = false
    this.waiting.shift()?.()
  }

  /** Back to the pool, unless it cannot be trusted (a connection error, a transaction left open). */
  finish(): void {
    if (this.over) return
    this.over = true
    // Idle outside a transaction ("I"); older drivers without the method are taken at their word.
    const status =
      typeof this.client.getTransactionStatus === "function" ? this.client.getTransactionStatus() : "I"
    const healthy = !this.broken && status === "I"
    this.client.release(healthy ? undefined : new Error("connection not reusable"))
  }

  /** Destroyed; its backend is fenced before the next statement if a statement was on the wire. */
  abandon(): void {
    if (this.over) return
    this.over = true
    this.broken = true
    const pid = this.client.processID
    if (this.inFlight && typeof pid === "number") this.onAbandon(pid)
    // The pool ends it (an error removes it); the socket is destroyed at once rather than waiting
    // for a goodbye a stalled peer would never acknowledge.
    this.client.release(new Error("statement abandoned"))
    this.client.connection.stream.destroy()
  }
}

type Stage = "connect" | "statement" | "fence"

/**
 * What becomes of an attempt's lease when it ends without being abandoned: back to the pool, or
 * kept by its owner (a transaction's connection; a reserved one handed over).
 */
interface LeasePolicy {
  readonly onSuccess: "finish" | "keep"
  readonly onFailure: "finish" | "keep"
}

/** One caller's attempt: ends exactly once, by the first of result, deadline or cancellation. */
class Attempt<A> {
  ended = false
  lease: Lease | undefined
  private readonly timer: ReturnType<typeof setTimeout>
  constructor(
    readonly deadlineMs: number,
    private stage: Stage,
    private readonly callback: Callback<A>,
    private readonly policy: LeasePolicy
  ) {
    this.timer = setTimeout(() => this.abandon(deadlineError(this.deadlineMs, this.stage)), deadlineMs)
  }
  at(stage: Stage): void {
    this.stage = stage
  }
  succeed(value: A): void {
    if (this.end(this.policy.onSuccess)) this.callback(undefined, value)
  }
  fail(error: SqlError): void {
    if (this.end(this.policy.onFailure)) this.callback(error)
  }
  abandon(error: SqlError): void {
    if (this.ended) return
    this.ended = true
    clearTimeout(this.timer)
    this.lease?.abandon()
    this.callback(error)
  }
  private end(lease: "finish" | "keep"): boolean {
    if (this.ended) return false
    this.ended = true
    clearTimeout(this.timer)
    if (lease === "finish") this.lease?.finish()
    return true
  }
}

const POOLED: LeasePolicy = { onSuccess: "finish", onFailure: "finish" }
const RESERVED: LeasePolicy = { onSuccess: "keep", onFailure: "finish" }
const OWNED: LeasePolicy = { onSuccess: "keep", onFailure: "keep" }

const FENCE_POLL_MS = 10

// The phases of a statement under a wait profile (`WaitProbe.ts`; nothing is recorded otherwise):
// the wait for a pooled connection, the fence, and the statement from sending it to its answer.
const CONNECT_PHASE = "pg.connection wait"
const FENCE_PHASE = "pg.fence"
const STATEMENT_PHASE = "pg.statement round trip"

export class GuardedPool {
  private readonly abandoned = new Set<number>()
  private fencing: Promise<void> | undefined

  constructor(readonly pool: PgPool) {
    // Errors of idle clients: the pool removes them; without a listener they would crash the process.
    pool.on("error", () => undefined)
  }

  /** Backends whose last statement's outcome is not settled yet (for tests and metrics). */
  get unsettled(): number {
    return this.abandoned.size
  }

  /** One statement outside a transaction. Returns the cancellation: it abandons the statement. */
  run(query: PgQuery, deadlineMs: number, callback: Callback<PgResult | Array<PgResult>>): () => void {
    const attempt = new Attempt(deadlineMs, "connect", callback, POOLED)
    const phases = waitPhases()
    this.checkout(attempt)
      .then((lease) => {
        phases?.mark(CONNECT_PHASE)
        return this.fence(lease, attempt)
      })
      .then((lease) => {
        phases?.mark(FENCE_PHASE)
        return this.send(lease, query, attempt)
      })
      .then(
        (result) => {
          phases?.mark(STATEMENT_PHASE)
          attempt.succeed(result)
        },
        (error: SqlError) => attempt.fail(error)
      )
    return () => attempt.abandon(new SqlError({ message: "statement interrupted" }))
  }

  /** A fenced client for a transaction; the caller finishes (or abandons) the lease. */
  reserve(deadlineMs: number, callback: Callback<Lease>): () => void {
    const attempt = new Attempt(deadlineMs, "connect", callback, RESERVED)
    const phases = waitPhases()
    this.checkout(attempt)
      .then((lease) => {
        phases?.mark(CONNECT_PHASE)
        return this.fence(lease, attempt)
      })
      .then(
        (lease) => attempt.succeed(lease),
        (error: SqlError) => attempt.fail(error)
      )
    return () => attempt.abandon(new SqlError({ message: "connection request interrupted" }))
  }

  /** One statement on a reserved client; passing the deadline abandons the client. */
  runOn(
    lease: Lease,
    query: PgQuery,
    deadlineMs: number,
    callback: Callback<PgResult | Array<PgResult>>
  ): () => void {
    const attempt = new Attempt(deadlineMs, "statement", callback, OWNED)
    attempt.lease = lease
    if (lease.over) {
      attempt.fail(deadlineError(deadlineMs, "statement"))
    } else {
      const phases = waitPhases()
      this.send(lease, query, attempt).then(
        (result) => {
          phases?.mark(STATEMENT_PHASE)
          attempt.succeed(result)
        },
        (error: SqlError) => attempt.fail(error)
      )
    }
    return () => attempt.abandon(new SqlError({ message: "statement interrupted" }))
  }

  private checkout<A>(attempt: Attempt<A>): Promise<Lease> {
    return new Promise((resolve, reject) => {
      this.pool.connect((error, client) => {
        if (error !== undefined || client === undefined) {
          reject(new SqlError({ cause: error, message: "Failed to acquire connection" }))
          return
        }
        const lease = new Lease(client, (pid) => this.abandoned.add(pid))
        // Too late for this caller: the connection itself is fine, it goes back.
        if (attempt.ended) {
          lease.finish()
          reject(new SqlError({ message: "connection arrived after the deadline" }))
          return
        }
        attempt.lease = lease
        resolve(lease)
      })
    })
  }

  private send<A>(
    lease: Lease,
    query: PgQuery,
    attempt: Attempt<A>,
    stage: Stage = "statement"
  ): Promise<PgResult | Array<PgResult>> {
    return new Promise((resolve, reject) =>
      lease.whenFree(() => {
        if (attempt.ended || lease.over) {
          reject(deadlineError(attempt.deadlineMs, stage))
          lease.next()
          return
        }
        attempt.at(stage)
        lease.inFlight = true
        try {
          lease.client.query(query, (error, result) => {
            if (error !== null && !isServerError(error)) lease.broken = true
            lease.next()
            if (error === null) resolve(result)
            else reject(statementError(error))
          })
        } catch (error) {
          lease.next()
          reject(statementError(error))
        }
      })
    )
  }

  /**
   * Settles every abandoned backend before `lease` runs anything. One fence runs at a time; the
   * others wait for it and then look again (a backend may have been abandoned meanwhile).
   */
  private async fence<A>(lease: Lease, attempt: Attempt<A>): Promise<Lease> {
    while (this.abandoned.size > 0) {
      if (attempt.ended) throw deadlineError(attempt.deadlineMs, "fence")
      attempt.at("fence")
      if (this.fencing !== undefined) {
        await this.fencing.catch(() => undefined)
        continue
      }
      const pids = [...this.abandoned]
      const running = this.terminate(lease, pids, attempt).then((settled) => {
        for (const pid of settled) this.abandoned.delete(pid)
      })
      this.fencing = running
      try {
        await running
      } finally {
        if (this.fencing === running) this.fencing = undefined
      }
    }
    return lease
  }

  /** Terminates `pids` (ours only, never this connection) and waits until they are gone. */
  private async terminate<A>(
    lease: Lease,
    pids: ReadonlyArray<number>,
    attempt: Attempt<A>
  ): Promise<ReadonlyArray<number>> {
    const ours = `pid = ANY($1::int[]) AND usename = session_user AND pid <> pg_backend_pid()`
    try {
      await this.send(
        lease,
        { text: `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${ours}`, values: [pids] },
        attempt,
        "fence"
      )
      for (;;) {
        const left = await this.send(
          lease,
          { text: `SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${ours}`, values: [pids] },
          attempt,
          "fence"
        )
        if ((left as PgResult).rows[0]?.n === 0) return pids
        await new Promise((done) => setTimeout(done, FENCE_POLL_MS))
      }
    } catch (error) {
      // A server that refuses the fence itself (no such function, no permission) will refuse it
      // every time: the backends are given up on rather than blocking every statement forever.
      if (!lease.broken && !attempt.ended && isServerError((error as SqlError).cause)) return pids
      throw error
    }
  }
}
