import { assert, describe, it } from "@effect/vitest"
import type { Caller } from "@rfq/engine"
import { Effect } from "effect"
import type { CancelOnDisconnectService } from "../../src/ws/CancelOnDisconnect.js"
import { cleanUpNamespace, eventually, host, inspector, testNamespace } from "./redisSupport.js"

/**
 * Cancel-on-disconnect counted over every host: a user's quotes are cancelled when the user's
 * last protected session on any host ends; a host that dies stops counting once its heartbeat
 * expires, and a survivor cancels for the users whose last protected sessions were there.
 */

const callerOf = (userId: number): Caller => ({
  userId,
  deskId: 100 + userId,
  roles: ["trader"],
  makerId: `m${userId}`
})

/** A host's count, recording the callers it cancels for. */
const countingHost = (
  namespace: string,
  hostId: string,
  options: { hostTtlMs?: number; heartbeatMs?: number } = {}
) =>
  Effect.gen(function* () {
    const cancelled: Array<Caller> = []
    const shared = yield* host(namespace, hostId, options)
    const sessions = yield* shared.cancelOnDisconnect((caller) => Effect.sync(() => cancelled.push(caller)))
    return { sessions, cancelled }
  })

/** A session of `caller` asks for protection on `sessions`; waits until Redis has it. */
const protect = (sessions: CancelOnDisconnectService, caller: Caller) => {
  sessions.enable(caller.userId, caller)
  // A round trip on the same connection: the count written before it is in.
  return Effect.orDie(sessions.total(caller.userId))
}

describe("the shared cancel-on-disconnect count", () => {
  it.live("sessions on two hosts: closing one cancels nothing, closing the last cancels once", () =>
    Effect.gen(function* () {
      const namespace = testNamespace()
      yield* cleanUpNamespace(namespace)
      const a = yield* countingHost(namespace, "a")
      const b = yield* countingHost(namespace, "b")
      const user = callerOf(5)
      yield* protect(a.sessions, user)
      yield* protect(a.sessions, user)
      assert.strictEqual(yield* protect(b.sessions, user), 3)
      assert.deepStrictEqual([a.sessions.count(5), b.sessions.count(5)], [2, 1])
      yield* a.sessions.release(user)
      yield* b.sessions.release(user)
      assert.deepStrictEqual([...a.cancelled, ...b.cancelled], [])
      assert.strictEqual(yield* Effect.orDie(b.sessions.total(5)), 1)
      // The last one, on a: cancelled there, once.
      yield* a.sessions.release(user)
      assert.deepStrictEqual(a.cancelled, [user])
      assert.deepStrictEqual(b.cancelled, [])
      // Turning protection off is no disconnect: nothing is cancelled.
      yield* protect(b.sessions, user)
      b.sessions.disable(5)
      assert.strictEqual(yield* Effect.orDie(b.sessions.total(5)), 0)
      assert.deepStrictEqual(b.cancelled, [])
    }).pipe(Effect.scoped)
  )

  it.live("a dead host stops counting when its heartbeat expires; a survivor cancels its orphans", () =>
    Effect.gen(function* () {
      const namespace = testNamespace()
      yield* cleanUpNamespace(namespace)
      const redis = yield* inspector
      // The dead host beats once at start and never again (as if killed right after).
      const dead = yield* countingHost(namespace, "dead", { hostTtlMs: 500, heartbeatMs: 3_600_000 })
      const survivor = yield* countingHost(namespace, "survivor", { hostTtlMs: 60_000, heartbeatMs: 50 })
      const shared = callerOf(8)
      const orphan = callerOf(9)
      yield* protect(dead.sessions, shared)
      yield* protect(dead.sessions, orphan)
      assert.strictEqual(yield* protect(survivor.sessions, shared), 2)
      yield* eventually(Effect.promise(() => redis.exists(`rfq:${namespace}:host:dead`).then((n) => n === 0)))
      // The dead host's session no longer counts.
      assert.strictEqual(yield* Effect.orDie(survivor.sessions.total(8)), 1)
      // The orphan's only protected session was on the dead host: the survivor cancels for it.
      yield* eventually(Effect.sync(() => survivor.cancelled.length > 0))
      assert.deepStrictEqual(survivor.cancelled, [orphan])
      // The shared user's last session ends on the survivor: cancelled there, as usual.
      yield* survivor.sessions.release(shared)
      assert.deepStrictEqual(survivor.cancelled, [orphan, shared])
      assert.deepStrictEqual(dead.cancelled, [])
    }).pipe(Effect.scoped)
  )

  it.live("a host restarting under its id sweeps its previous run's counts", () =>
    Effect.gen(function* () {
      const namespace = testNamespace()
      yield* cleanUpNamespace(namespace)
      const other = yield* countingHost(namespace, "other")
      const user = callerOf(11)
      const lone = callerOf(12)
      // The first run protects two users, and is gone without winding up (its scope is never closed
      // here: the process "died" and another run starts under the same id).
      const firstRun = yield* countingHost(namespace, "h1", { hostTtlMs: 60_000, heartbeatMs: 3_600_000 })
      yield* protect(firstRun.sessions, user)
      yield* protect(firstRun.sessions, lone)
      yield* protect(other.sessions, user)
      const secondRun = yield* countingHost(namespace, "h1")
      assert.deepStrictEqual(secondRun.cancelled, [lone])
      assert.strictEqual(yield* Effect.orDie(other.sessions.total(11)), 1)
    }).pipe(Effect.scoped)
  )
})
