import {
  type AccountStatus,
  type ApiError,
  apiError,
  type StatusKey,
  type UserAccountsService
} from "@rfq/engine"
import { Effect } from "effect"
import { BoundedCache } from "./BoundedCache.js"

/**
 * Whether the holder of a token may still act: its user and client active, its refresh family not
 * revoked. Read from the database and remembered for `cacheMillis` per (user, client, family), so
 * that a change takes effect on live tokens within that time, on REST and on open sessions alike.
 *
 * Reads can finish out of order (a request's read that began before a deactivation may land after
 * the sessions' recheck that saw it), so each entry keeps the time its read began and an older
 * read never replaces a newer one: once a refusal is known, a stale "active" cannot undo it.
 */
interface Entry {
  readonly status: AccountStatus
  /** When the read behind `status` began (or the change was made here), unix ms. */
  readonly readAt: number
}

/** Key texts by key object: a session's caller is asked about on every call and every event. */
const keyTexts = new WeakMap<StatusKey, string>()

export const statusKeyText = (key: StatusKey): string => {
  let text = keyTexts.get(key)
  if (text === undefined) {
    text = `${key.userId}\u0000${key.clientId ?? ""}\u0000${key.family ?? ""}`
    keyTexts.set(key, text)
  }
  return text
}

/** The refusal a status means: a revoked family before an inactive account (REST's order). */
export const refusalOf = (status: AccountStatus): ApiError | undefined =>
  status.familyRevoked
    ? apiError("tokenExpiredOrInvalid")
    : status.active
      ? undefined
      : apiError("accountInactive")

/**
 * Several hosts (multi-host mode) tell each other of refusals, so that a token revoked or an
 * account deactivated on one is refused by all of them at once rather than when their caches age:
 * `onRefused` is called for every refusal this host finds that it did not already know (a read, a
 * refresh-token replay), and `heard` takes another host's. A heard refusal is remembered without
 * being told again (no echo), and an inactive account also makes every active entry of its user
 * read before it stale (another client or family of the same user may be inactive too): the next
 * use reads the database. Re-reads that find more refusals tell them in turn; each host tells a
 * refusal of a key once per cache lifetime, so the exchange ends.
 */
export type OnRefused = (key: StatusKey, status: AccountStatus) => void

export class AccountStanding {
  private readonly entries: BoundedCache<string, Entry>
  /** Per user, when another host said it is inactive: its active entries read before are stale. */
  private readonly dropped: BoundedCache<number, number>
  /** When every status was last forgotten (`forgetAll`), unix ms. */
  private forgottenAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly accounts: Pick<UserAccountsService, "accountStatus" | "accountStatuses">,
    private readonly cacheMillis: number,
    cacheSize: number,
    private readonly onRefused?: OnRefused | undefined
  ) {
    this.entries = new BoundedCache(cacheSize)
    this.dropped = new BoundedCache(cacheSize)
  }

  /** The remembered status of `key` at `now`, if any (synchronous: the per-request path). */
  cached(key: StatusKey, now: number): AccountStatus | undefined {
    const entry = this.entries.get(statusKeyText(key), now)
    if (entry === undefined) return undefined
    // Empty on one host: one size check on the request path.
    if (this.dropped.size !== 0 && entry.status.active && !entry.status.familyRevoked) {
      const droppedAt = this.dropped.get(key.userId, now)
      if (droppedAt !== undefined && entry.readAt <= droppedAt) return undefined
    }
    return entry.status
  }

  /** Remembers `status`, read (or made) at `readAt`, unless a newer read is already remembered. */
  remember(key: StatusKey, status: AccountStatus, readAt: number, heard = false): void {
    const text = statusKeyText(key)
    const current = this.entries.get(text, readAt)
    if (current !== undefined && current.readAt > readAt) return
    if (readAt <= this.forgottenAt && refusalOf(status) === undefined) return
    this.entries.set(text, { status, readAt }, readAt + this.cacheMillis)
    if (
      this.onRefused !== undefined &&
      !heard &&
      refusalOf(status) !== undefined &&
      (current === undefined || refusalOf(current.status) === undefined)
    )
      this.onRefused(key, status)
  }

  /** Another host found `key` refused at about `now` (see `OnRefused`). */
  heard(key: StatusKey, status: AccountStatus, now: number): void {
    this.remember(key, status, now, true)
    if (!status.active) this.dropped.set(key.userId, now, now + this.cacheMillis)
  }

  /**
   * Forgets every remembered status (refusals from other hosts may have been missed, or accounts
   * were changed through this host's admin socket). A read that began before `now` may have seen
   * the database before the change: what it finds active is answered but not remembered.
   */
  forgetAll(now: number): void {
    this.entries.clear()
    this.forgottenAt = Math.max(this.forgottenAt, now)
  }

  /** The status of `key`: remembered, or read from the database (and remembered). */
  status(key: StatusKey, now: number): Effect.Effect<AccountStatus> {
    const cached = this.cached(key, now)
    if (cached !== undefined) return Effect.succeed(cached)
    return Effect.tap(this.accounts.accountStatus(key.userId, key.clientId, key.family), (status) =>
      this.remember(key, status, now)
    )
  }

  /**
   * The status of every key read from the database now, in a few queries, each remembered (so REST
   * sees a change as soon as the sessions' recheck does). Answers in the order of `keys`.
   */
  recheck(keys: ReadonlyArray<StatusKey>, now: number): Effect.Effect<ReadonlyArray<AccountStatus>> {
    if (keys.length === 0) return Effect.succeed([])
    const distinct = new Map<string, StatusKey>()
    for (const key of keys) distinct.set(statusKeyText(key), key)
    const unique = [...distinct.values()]
    return Effect.map(this.accounts.accountStatuses(unique), (statuses) => {
      const byKey = new Map<string, AccountStatus>()
      unique.forEach((key, i) => {
        const status = statuses[i]!
        byKey.set(statusKeyText(key), status)
        this.remember(key, status, now)
      })
      return keys.map((key) => byKey.get(statusKeyText(key))!)
    })
  }
}
