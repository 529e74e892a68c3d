import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connect, promise, TestHost, TestHostLive } from "./hostHarness.js"

/**
 * Class 2 of issue 12 over real sockets on the real application: `auth` with client credentials
 * is exempt from the WebSocket message limit, but not from the limit of failed secret checks,
 * which it shares with the token endpoints. The scrypt runs are read from `/metrics`.
 */

const verifications = (url: string) =>
  promise(async () => {
    const text = await (await fetch(`${url}/metrics`)).text()
    const count = (outcome: string) =>
      Number(
        new RegExp(`rfq_client_secret_checks_total\\{outcome="${outcome}"\\} (\\d+)`).exec(text)?.[1] ?? 0
      )
    return count("match") + count("mismatch")
  })

/** The default `LOGIN_FAILURES_PER_MINUTE`. */
const LIMIT = 10

layer(TestHostLive, { excludeTestServices: true, timeout: "120 seconds" })(
  "guessing over WebSocket",
  (it) => {
    it.scoped(
      "150 wrong secrets over five sockets and a REST endpoint from one address: at most the limit verified",
      () =>
        Effect.gen(function* () {
          const host = yield* TestHost
          const sockets = yield* Effect.all(Array.from({ length: 5 }, () => connect(host.wsUrl)))
          const before = yield* verifications(host.url)
          const start = Date.now()
          const answers = yield* promise(() =>
            Promise.all(
              Array.from({ length: 150 }, (_, i) =>
                i % 6 === 5
                  ? fetch(`${host.url}/v1/auth`, {
                      method: "POST",
                      body: JSON.stringify({ clientId: "demo-maker-1", clientSecret: `guess-${i}` })
                    }).then(async (r) => ((await r.json()) as { message: string }).message)
                  : sockets[i % 5]!.call("auth", {
                      clientId: i % 2 === 0 ? "demo-maker-1" : "no-such-client",
                      clientSecret: `guess-${i}`
                    }).then((reply) => reply.error?.message as string)
              )
            )
          )
          const windows = Math.floor(Date.now() / 60_000) - Math.floor(start / 60_000) + 1
          const verified = (yield* verifications(host.url)) - before
          const counts: Record<string, number> = {}
          for (const a of answers) counts[a] = (counts[a] ?? 0) + 1
          assert.isAtMost(verified, LIMIT * windows)
          assert.strictEqual(counts["invalid client ID"], verified)
          assert.strictEqual(
            (counts["Rate limit exceeded"] ?? 0) + (counts["rate limit exceeded"] ?? 0),
            150 - verified
          )
          // The sockets stay open and usable: a throttled `auth` is an answer, not a disconnect.
          assert.isDefined((yield* promise(() => sockets[0]!.call("heartbeat"))).result)
        })
    )
  }
)
