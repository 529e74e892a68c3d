import { assert, describe, it } from "@effect/vitest"
import { addressKey, type LoginAttempt, LoginThrottle, LoginThrottled } from "../../src/auth/LoginThrottle.js"

/** The limiter of failed client-secret checks, on explicit times (no clock). */

const allowed = (outcome: LoginAttempt | LoginThrottled): LoginAttempt => {
  if (outcome instanceof LoginThrottled) throw new Error(`refused: ${JSON.stringify(outcome.decision)}`)
  return outcome
}

describe("LoginThrottle", () => {
  it("per address: `perAddress` failures per window whatever the client id, then refused until the window ends", () => {
    const throttle = new LoginThrottle({ perAddress: 3, perClient: 100 })
    for (const id of ["a", "b", "c"]) allowed(throttle.attempt(id, "203.0.113.5", 1_000)).settle(false)
    const refused = throttle.attempt("d", "203.0.113.5", 2_000)
    assert.instanceOf(refused, LoginThrottled)
    assert.deepStrictEqual((refused as LoginThrottled).decision, {
      allowed: false,
      limit: 3,
      remaining: 0,
      reset: 60
    })
    // Another address is not held back; the next window starts over.
    allowed(throttle.attempt("d", "203.0.113.6", 2_000))
    allowed(throttle.attempt("d", "203.0.113.5", 60_000))
  })

  it("attempts are reserved before verification: concurrent guesses cannot all pass", () => {
    const throttle = new LoginThrottle({ perAddress: 5, perClient: 100 })
    const outcomes = Array.from({ length: 50 }, () => throttle.attempt("victim", "203.0.113.5", 0))
    assert.strictEqual(outcomes.filter((o) => !(o instanceof LoginThrottled)).length, 5)
  })

  it("a match gives its reservation back: successes never use up the budget", () => {
    const throttle = new LoginThrottle({ perAddress: 2, perClient: 2 })
    for (let i = 0; i < 20; i++) allowed(throttle.attempt("client", "203.0.113.5", i)).settle(true)
    allowed(throttle.attempt("client", "203.0.113.5", 100)).settle(false)
    allowed(throttle.attempt("client", "203.0.113.5", 101)).settle(false)
    assert.instanceOf(throttle.attempt("client", "203.0.113.5", 102), LoginThrottled)
  })

  it("per client id across addresses, except for an address that authenticated as the client before", () => {
    const throttle = new LoginThrottle({ perAddress: 100, perClient: 3 })
    // The real client logs in from its usual address.
    allowed(throttle.attempt("victim", "192.0.2.10", 0)).settle(true)
    // A distributed guesser: three addresses, one failure each.
    for (const ip of ["198.51.100.1", "198.51.100.2", "198.51.100.3"])
      allowed(throttle.attempt("victim", ip, 1_000)).settle(false)
    assert.instanceOf(throttle.attempt("victim", "198.51.100.4", 2_000), LoginThrottled)
    // A new address of the real client is locked out with the guessers until the window ends...
    assert.instanceOf(throttle.attempt("victim", "192.0.2.99", 2_000), LoginThrottled)
    // ...but its known address still gets through, and other clients are untouched.
    allowed(throttle.attempt("victim", "192.0.2.10", 2_000)).settle(true)
    allowed(throttle.attempt("someone-else", "198.51.100.4", 2_000))
  })

  it("a guesser sharing the real client's address locks out other ids, not the client it knows nothing of", () => {
    const throttle = new LoginThrottle({ perAddress: 3, perClient: 100 })
    const nat = "203.0.113.77"
    allowed(throttle.attempt("real", nat, 0)).settle(true)
    for (const id of ["x", "y", "z"]) allowed(throttle.attempt(id, nat, 1)).settle(false)
    assert.instanceOf(throttle.attempt("w", nat, 2), LoginThrottled)
    // The real client, trusted at this address, is held only to its own pair limit...
    allowed(throttle.attempt("real", nat, 3)).settle(true)
    // ...which a guesser at the same address can use up for that client, and no more.
    for (let i = 0; i < 3; i++) allowed(throttle.attempt("real", nat, 4)).settle(false)
    assert.instanceOf(throttle.attempt("real", nat, 5), LoginThrottled)
    allowed(throttle.attempt("real", nat, 60_000)).settle(true)
  })

  it("a refused client-id check does not use up the address's budget", () => {
    const throttle = new LoginThrottle({ perAddress: 2, perClient: 1 })
    allowed(throttle.attempt("locked", "203.0.113.1", 0)).settle(false)
    for (let i = 0; i < 5; i++)
      assert.instanceOf(throttle.attempt("locked", "203.0.113.2", 1), LoginThrottled)
    allowed(throttle.attempt("other", "203.0.113.2", 2)).settle(false)
    allowed(throttle.attempt("other2", "203.0.113.2", 3)).settle(false)
    assert.instanceOf(throttle.attempt("other3", "203.0.113.2", 4), LoginThrottled)
  })

  it("without an address only the client id's limit applies", () => {
    const throttle = new LoginThrottle({ perAddress: 1, perClient: 2 })
    allowed(throttle.attempt("c", undefined, 0)).settle(false)
    allowed(throttle.attempt("c", undefined, 0)).settle(false)
    assert.instanceOf(throttle.attempt("c", undefined, 0), LoginThrottled)
  })

  it("addresses: IPv4 as is (also IPv4-mapped), IPv6 by its /64", () => {
    assert.strictEqual(addressKey("127.0.0.1"), "127.0.0.1")
    assert.strictEqual(addressKey("::ffff:203.0.113.5"), "203.0.113.5")
    assert.strictEqual(addressKey("0000:0000:0000:0000:0000:ffff:cb00:7105"), "203.0.113.5")
    assert.strictEqual(addressKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64")
    assert.strictEqual(addressKey("2001:0DB8:0001:0002:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64")
    assert.strictEqual(addressKey("::1"), "0:0:0:0::/64")
    const throttle = new LoginThrottle({ perAddress: 1, perClient: 100 })
    allowed(throttle.attempt("a", "2001:db8:1:2::1", 0)).settle(false)
    assert.instanceOf(throttle.attempt("b", "2001:db8:1:2:ffff::9", 0), LoginThrottled)
    allowed(throttle.attempt("b", "2001:db8:1:3::1", 0))
  })
})
