import type { Caller } from "@rfq/engine"
import { Duration, Effect, Either, Schedule, Schema, type Scope } from "effect"
import type { Redis } from "ioredis"
import type { CancelOnDisconnectService } from "../ws/CancelOnDisconnect.js"
import { defineScript, type Warn } from "./RedisConnection.js"

/**
 * Cancel-on-disconnect counted over every host: a user's quotes are cancelled when the user's last
 * protected session on ANY host ends, and when a host dies, by a survivor, for the users whose
 * last protected sessions were there.
 *
 * Keys (`P` = `rfq:<namespace>:`): `P cod:user:<userId>`, a hash of host id → that host's count of
 * the user's protected sessions; `P cod:host:<hostId>:users`, a hash of user id → the caller to
 * cancel for (what a survivor needs); `P host:<hostId>`, the host's heartbeat, which expires
 * `hostTtlMs` after the last beat; `P cod:hosts`, the hosts that have counted.
 *
 * Each host writes only its own field, always its absolute count (kept here, in memory), so writes
 * are idempotent and a lost one is repaired by the next resync. The count of a user is the sum over
 * the fields of live hosts (heartbeat present), so a dead host stops counting at most `hostTtlMs`
 * after its last beat. Every beat (`heartbeatMs`, default a third of `hostTtlMs`) also sweeps: a
 * script removes each dead host from `P cod:hosts` (one survivor wins it), deletes its fields, and
 * answers the callers whose count fell to zero; the survivor cancels their quotes. So a dead
 * host's users are cancelled within `hostTtlMs + heartbeatMs` of its last beat.
 *
 * A host id must be unique among running hosts; a host starting under the id of a previous run
 * sweeps that run's counts first (its sessions are gone). A host whose beats lapsed (a long pause,
 * Redis lost its data) writes all its counts again at its next beat; meanwhile a survivor may
 * already have cancelled its users' quotes: cancelling early is the safe side.
 *
 * Redis away: the counts here still decide while this host has other protected sessions of the
 * user; when the last one here ends and Redis cannot say whether others remain, the quotes are
 * cancelled (the safe side again), and the counts are written again once Redis answers.
 */

const SET_LUA = `
if tonumber(ARGV[2]) > 0 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
else
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[3])
end
local fields = redis.call('HGETALL', KEYS[1])
local total = 0
for i = 1, #fields, 2 do
  if fields[i] == ARGV[1] or redis.call('EXISTS', ARGV[5] .. fields[i]) == 1 then
    total = total + tonumber(fields[i + 1])
  end
end
return total
`

const BEAT_LUA = `
local before = redis.call('SET', KEYS[1], '1', 'PX', ARGV[1], 'GET')
redis.call('SADD', KEYS[2], ARGV[2])
if before then return 1 end
return 0
`

const SWEEP_LUA = `
local P, self, forced = ARGV[1], ARGV[2], ARGV[3]
local function live(h)
  return h ~= forced and (h == self or redis.call('EXISTS', P .. 'host:' .. h) == 1)
end
local orphaned, seen = {}, {}
for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if not live(h) then
    redis.call('SREM', KEYS[1], h)
    local usersKey = P .. 'cod:host:' .. h .. ':users'
    local users = redis.call('HGETALL', usersKey)
    for i = 1, #users, 2 do
      local userKey = P .. 'cod:user:' .. users[i]
      redis.call('HDEL', userKey, h)
      local fields = redis.call('HGETALL', userKey)
      local total = 0
      for j = 1, #fields, 2 do
        if live(fields[j]) then total = total + tonumber(fields[j + 1]) end
      end
      if total == 0 and not seen[users[i]] then
        seen[users[i]] = true
        orphaned[#orphaned + 1] = users[i + 1]
      end
    end
    redis.call('DEL', usersKey)
  end
end
return orphaned
`

const CallerJson = Schema.parseJson(
  Schema.Struct({
    userId: Schema.Number,
    deskId: Schema.Number,
    roles: Schema.Array(Schema.Literal("trader", "viewer")),
    makerId: Schema.optional(Schema.String)
  })
)
const Orphaned = Schema.Array(Schema.String)

/** The scripts on a connection. */
export const defineCancelScripts = (redis: Redis) => ({
  set: defineScript(redis, "rfqCodSet", SET_LUA),
  beat: defineScript(redis, "rfqCodBeat", BEAT_LUA),
  sweep: defineScript(redis, "rfqCodSweep", SWEEP_LUA)
})

export interface RedisCancelOnDisconnectOptions {
  readonly redis: Redis
  readonly scripts: ReturnType<typeof defineCancelScripts>
  /** `rfq:<namespace>:`. */
  readonly prefix: string
  readonly hostId: string
  /** How long a host counts after its last heartbeat (default 6 s). */
  readonly hostTtlMs?: number | undefined
  /** How often it beats and sweeps (default a third of `hostTtlMs`). */
  readonly heartbeatMs?: number | undefined
  readonly warn: Warn
  readonly cancel: (caller: Caller) => Effect.Effect<void>
}

export const DEFAULT_HOST_TTL_MS = 6_000

export const makeRedisCancelOnDisconnect = (
  options: RedisCancelOnDisconnectOptions
): Effect.Effect<CancelOnDisconnectService, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { redis, scripts, prefix, hostId, warn, cancel } = options
    const hostTtlMs = options.hostTtlMs ?? DEFAULT_HOST_TTL_MS
    const heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(hostTtlMs / 3))
    const hostsKey = `${prefix}cod:hosts`
    const hostUsersKey = `${prefix}cod:host:${hostId}:users`
    const userKey = (userId: number) => `${prefix}cod:user:${userId}`
    const local = new Map<number, { count: number; caller: string }>()
    /** A write failed (or none was made yet): the next beat writes every count again. */
    let dirty = false

    const callerText = (caller: Caller | undefined) =>
      caller === undefined
        ? ""
        : Schema.encodeSync(CallerJson)({
            userId: caller.userId,
            deskId: caller.deskId,
            roles: caller.roles,
            ...(caller.makerId === undefined ? {} : { makerId: caller.makerId })
          })

    /** Writes this host's count of `userId`; answers the count over every live host. */
    const write = (userId: number) => {
      const entry = local.get(userId)
      return scripts.set(
        [userKey(userId), hostUsersKey],
        [hostId, entry?.count ?? 0, userId, entry?.caller ?? "", `${prefix}host:`]
      )
    }
    const writeLater = (userId: number) => {
      write(userId).catch((error: unknown) => {
        dirty = true
        warn("cancel-on-disconnect count not written", error)
      })
    }

    const cancelAll = (texts: ReadonlyArray<string>) =>
      Effect.forEach(
        texts,
        (text) =>
          Either.match(Schema.decodeUnknownEither(CallerJson)(text), {
            onLeft: () => Effect.logWarning("cancel-on-disconnect: a dead host's user has no caller"),
            onRight: (caller) => cancel(caller)
          }),
        { concurrency: 8, discard: true }
      )

    /** Removes dead hosts (and `forced`, a previous run of this one): cancels their orphans. */
    const sweep = (forced: string) =>
      Effect.tryPromise(() => scripts.sweep([hostsKey], [prefix, hostId, forced])).pipe(
        Effect.flatMap(Schema.decodeUnknown(Orphaned)),
        Effect.flatMap(cancelAll)
      )

    /** Writes every count of this host again, and clears what Redis still holds beyond them. */
    const resync = Effect.tryPromise(async () => {
      dirty = false
      const held = (await redis.hkeys(hostUsersKey)).map(Number).filter((id) => !local.has(id))
      await Promise.all([...local.keys(), ...held].map(write))
    }).pipe(Effect.tapError(() => Effect.sync(() => (dirty = true))))

    const beat = Effect.tryPromise(() =>
      scripts.beat([`${prefix}host:${hostId}`, hostsKey], [hostTtlMs, hostId])
    ).pipe(
      Effect.flatMap((alive) => (alive === 1 && !dirty ? Effect.void : resync)),
      Effect.zipRight(sweep("")),
      Effect.catchAll((error) => Effect.sync(() => warn("cancel-on-disconnect heartbeat failed", error)))
    )

    // A previous run under this id left counts of sessions that are gone.
    yield* sweep(hostId).pipe(
      Effect.catchAll((error) => Effect.sync(() => warn("cancel-on-disconnect start sweep failed", error)))
    )
    // Shutdown, after the sessions have wound up and the beats stopped (finalizers run in reverse):
    // what is left here ends now, and so does the heartbeat.
    yield* Effect.addFinalizer(() =>
      sweep(hostId).pipe(
        Effect.zipRight(Effect.tryPromise(() => redis.del(`${prefix}host:${hostId}`))),
        Effect.timeout(Duration.seconds(5)),
        Effect.catchAll((error) =>
          Effect.sync(() => warn("cancel-on-disconnect shutdown sweep failed", error))
        )
      )
    )
    yield* beat
    yield* Effect.forkScoped(Effect.repeat(beat, Schedule.spaced(Duration.millis(heartbeatMs))))

    const disable = (userId: number) => {
      const entry = local.get(userId)
      if (entry === undefined) return
      entry.count -= 1
      if (entry.count <= 0) local.delete(userId)
      writeLater(userId)
    }

    return {
      enable: (userId, caller) => {
        const entry = local.get(userId)
        if (entry === undefined) local.set(userId, { count: 1, caller: callerText(caller) })
        else {
          entry.count += 1
          if (entry.caller === "") entry.caller = callerText(caller)
        }
        writeLater(userId)
      },
      disable,
      release: (caller) =>
        Effect.suspend(() => {
          const entry = local.get(caller.userId)
          if (entry !== undefined && entry.count > 1) {
            disable(caller.userId)
            return Effect.void
          }
          local.delete(caller.userId)
          return Effect.tryPromise(() => write(caller.userId)).pipe(
            Effect.flatMap((total) => (total === 0 ? cancel(caller) : Effect.void)),
            Effect.catchAll((error) =>
              Effect.suspend(() => {
                dirty = true
                warn("cancel-on-disconnect count unknown; cancelling", error)
                return cancel(caller)
              })
            )
          )
        }),
      count: (userId) => local.get(userId)?.count ?? 0,
      // Writing this host's count again is harmless (it is absolute) and reads the sum with it.
      total: (userId) => Effect.tryPromise(() => write(userId)).pipe(Effect.map((total) => Number(total)))
    } satisfies CancelOnDisconnectService
  })
