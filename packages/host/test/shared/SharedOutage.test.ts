import * as net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import type { Caller } from "@rfq/engine"
import { Effect, Either, type Scope } from "effect"
import { LoginThrottled } from "../../src/auth/LoginThrottle.js"
import type { RateLimit } from "../../src/RateLimiter.js"
import { cleanUpNamespace, eventually, host, testNamespace, testRedisUrl } from "./redisSupport.js"

/**
 * Redis going away at run time, for real: one host reaches Redis through a TCP relay that the test
 * cuts and restores. The service stays up (`RedisSharedState.ts`): limits fall back to the host's
 * own counts, the last protected session's end cancels when the count cannot be read, and the
 * counts are written again once Redis is back.
 */

/** A relay to the test Redis that can be cut (connections dropped, new ones refused) and restored. */
const relay: Effect.Effect<
  { readonly url: string; readonly cut: Effect.Effect<void>; readonly restore: Effect.Effect<void> },
  never,
  Scope.Scope
> = Effect.gen(function* () {
  const target = new URL(testRedisUrl)
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on("error", () => socket.destroy())
      socket.on("close", () => {
        sockets.delete(socket)
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream).pipe(client)
  })
  const listen = (port: number) =>
    Effect.async<number>((resume) => {
      server.listen(port, "127.0.0.1", () =>
        resume(Effect.succeed((server.address() as net.AddressInfo).port))
      )
    })
  const port = yield* listen(0)
  const cut = Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    for (const socket of sockets) socket.destroy()
  })
  yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
  return { url: `redis://127.0.0.1:${port}`, cut, restore: Effect.asVoid(listen(port)) }
})

const allowed = (limiter: RateLimit, key: string) =>
  Effect.suspend(() => {
    const decision = limiter.take(key, Date.now())
    return Effect.map(Effect.isEffect(decision) ? decision : Effect.succeed(decision), (d) => d.allowed)
  })

const caller: Caller = { userId: 21, deskId: 1, roles: ["trader"], makerId: "m21" }

describe("Redis away at run time", () => {
  it.live(
    "limits fall back to the host's own; cancel-on-disconnect cancels, then counts are written again",
    () =>
      Effect.gen(function* () {
        const namespace = testNamespace()
        yield* cleanUpNamespace(namespace)
        const { url, cut, restore } = yield* relay
        const relayed = yield* host(namespace, "relayed", {
          redisUrl: url,
          hostTtlMs: 60_000,
          heartbeatMs: 50
        })
        const direct = yield* host(namespace, "direct", { hostTtlMs: 60_000 })
        const cancelled: Array<number> = []
        const relayedSessions = yield* relayed.cancelOnDisconnect((c) =>
          Effect.sync(() => cancelled.push(c.userId))
        )
        const directSessions = yield* direct.cancelOnDisconnect(() => Effect.void)
        const relayedLimit = relayed.rateLimit("http", 3)
        const directLimit = direct.rateLimit("http", 3)
        const throttle = relayed.loginThrottle({ perAddress: 2, perClient: 100 })

        // The fallback counts in windows on the minute (`RateLimiter`): a minute that ends between
        // the outage's requests starts a fresh one and lets a fourth through (seen on a loaded
        // machine). Start far enough from the minute's end for the checks below to fit in it.
        const intoMinute = Date.now() % 60_000
        if (intoMinute > 40_000) yield* Effect.sleep(60_000 - intoMinute + 50)
        // Before the outage: two requests counted in Redis, three protected sessions of user 21.
        assert.deepStrictEqual(
          [yield* allowed(relayedLimit, "user:1"), yield* allowed(relayedLimit, "user:1")],
          [true, true]
        )
        relayedSessions.enable(21, caller)
        relayedSessions.enable(21, caller)
        directSessions.enable(21, caller)
        yield* Effect.orDie(relayedSessions.total(21))
        assert.strictEqual(yield* Effect.orDie(directSessions.total(21)), 3)

        yield* cut
        // The relayed host counts on its own (a fresh window here); the direct one still shares Redis.
        const during: Array<boolean> = []
        for (let i = 0; i < 4; i++) during.push(yield* allowed(relayedLimit, "user:1"))
        assert.deepStrictEqual(during, [true, true, true, false])
        assert.deepStrictEqual(
          [yield* allowed(directLimit, "user:1"), yield* allowed(directLimit, "user:1")],
          [true, false]
        )
        // The failed-secret throttle too: this host's own limit per address.
        const logins: Array<boolean> = []
        for (let i = 0; i < 3; i++) {
          const attempt = throttle.attempt(`c${i}`, "10.9.9.9", Date.now())
          const outcome =
            attempt instanceof LoginThrottled
              ? Either.left(attempt)
              : Effect.isEffect(attempt)
                ? yield* Effect.either(attempt)
                : Either.right(attempt)
          if (Either.isRight(outcome)) outcome.right.settle(false)
          logins.push(Either.isRight(outcome))
        }
        assert.deepStrictEqual(logins, [true, true, false])
        // One of two protected sessions here ends: the other one here still protects, no cancel.
        yield* relayedSessions.release(caller)
        assert.deepStrictEqual(cancelled, [])
        // The last one here ends and the other hosts' count cannot be read: cancelled (the safe side),
        // although the direct host still holds a session.
        yield* relayedSessions.release(caller)
        assert.deepStrictEqual(cancelled, [21])
        // Redis still holds the relayed host's old count...
        assert.strictEqual(yield* Effect.orDie(directSessions.total(21)), 3)

        yield* restore
        // ...until the relayed host is back and writes its counts again (none left for user 21).
        yield* eventually(Effect.map(Effect.orDie(directSessions.total(21)), (n) => n === 1))
        assert.strictEqual(relayedSessions.count(21), 0)
      }).pipe(Effect.scoped)
  )
})
