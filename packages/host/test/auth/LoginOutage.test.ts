import { assert, describe, it } from "@effect/vitest"
import type { ClientAccount, UserAccountsService } from "@rfq/engine"
import { Effect, Either, Fiber, Option, TestClock } from "effect"
import type { AccountStanding } from "../../src/auth/AccountStanding.js"
import { LoginThrottle, LoginThrottled } from "../../src/auth/LoginThrottle.js"
import { hashSecret, makeDummyHash } from "../../src/auth/SecretHash.js"
import { makeGrants } from "../../src/auth/TokenGrants.js"
import type { Tokens } from "../../src/auth/Tokens.js"
import { testScryptParams } from "./authFixtures.js"

/**
 * A client-secret check that ends without a verdict (the account cannot be read: the database is
 * down) gives its login-throttle reservation back, so a client retrying through an outage is not
 * refused once the database is back. Wrong secrets still count, and so does a check the client
 * walked away from. The test clock stands still: every attempt falls in one window.
 */

const PER_ADDRESS = 3
const ip = "203.0.113.20"

const setup = Effect.gen(function* () {
  const account: ClientAccount = {
    clientId: "client-1",
    secretHash: yield* hashSecret("right", testScryptParams),
    clientActive: true,
    userId: 7,
    userActive: true,
    deskId: 1,
    roles: ["trader"]
  }
  const database = { state: "up" as "up" | "down" | "hangs", reads: 0 }
  const unreachable = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
    code: "ECONNREFUSED"
  })
  const store = {
    clientAccount: (clientId: string) =>
      Effect.suspend(() => {
        database.reads += 1
        if (database.state === "down") return Effect.die(unreachable)
        if (database.state === "hangs") return Effect.never
        return Effect.succeed(clientId === account.clientId ? Option.some(account) : Option.none())
      })
  } as unknown as UserAccountsService
  const tokens = { signAccess: () => Effect.succeed({ token: "signed" }) } as unknown as Tokens
  const standing = { remember: () => undefined } as unknown as AccountStanding
  const grants = makeGrants({
    accounts: store,
    tokens,
    standing,
    throttle: new LoginThrottle({ perAddress: PER_ADDRESS, perClient: 5 * PER_ADDRESS }),
    dummyHash: yield* makeDummyHash(testScryptParams)
  })
  const login = (secret: string) =>
    Effect.either(grants.clientCredentials(account.clientId, secret, 3600, false, ip)).pipe(
      Effect.map((outcome) =>
        Either.isRight(outcome)
          ? "ok"
          : outcome.left instanceof LoginThrottled
            ? "throttled"
            : ((outcome.left as { message?: string }).message ?? "died")
      ),
      Effect.catchAllDefect(() => Effect.succeed("database unreachable"))
    )
  return { database, login }
})

describe("login attempts during a database outage", () => {
  it.effect("checks that could not read the account are given back; wrong secrets still count", () =>
    Effect.gen(function* () {
      const { database, login } = yield* setup
      database.state = "down"
      const during: Array<string> = []
      for (let i = 0; i < 4 * PER_ADDRESS; i++) during.push(yield* login("right"))
      assert.deepStrictEqual(during, Array(4 * PER_ADDRESS).fill("database unreachable"))
      // Every retry reached the store: none was refused by the throttle.
      assert.strictEqual(database.reads, 4 * PER_ADDRESS)
      database.state = "up"
      assert.strictEqual(yield* login("right"), "ok")
      // The budget is whole: PER_ADDRESS wrong secrets are checked, the next one is refused.
      const wrong: Array<string> = []
      for (let i = 0; i <= PER_ADDRESS; i++) wrong.push(yield* login(`wrong-${i}`))
      assert.deepStrictEqual(wrong, [...Array(PER_ADDRESS).fill("invalid client ID"), "throttled"])
    })
  )

  it.effect("a check interrupted while reading the account stays counted", () =>
    Effect.gen(function* () {
      const { database, login } = yield* setup
      database.state = "hangs"
      for (let i = 0; i < PER_ADDRESS; i++) {
        const pending = yield* Effect.fork(login("right"))
        yield* TestClock.adjust(0)
        yield* Fiber.interrupt(pending)
      }
      database.state = "up"
      assert.strictEqual(yield* login("right"), "throttled")
    })
  )
})
