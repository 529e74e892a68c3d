import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { parseBearerToken } from "../src/auth/BearerToken.js"
import { HeaderMemo } from "../src/auth/HeaderMemo.js"
import { type AccessClaims, Tokens } from "../src/auth/Tokens.js"

/**
 * The memo against an exact-key map that may forget: whatever it answers for a text is the value
 * last set for that very text, or nothing. Once it answered nothing for a text, that text stays
 * forgotten until it is set again (a value never comes back from another text's slot).
 */
interface Model {
  /** Texts the memo may still hold, with the value last set for each. */
  readonly kept: Map<string, number>
  /** Distinct values, so that a value answered for the wrong text is told apart. */
  nextValue: number
}

interface Real {
  readonly memo: HeaderMemo<number>
  /** The texts the commands pick from by position; many share their last two characters. */
  readonly texts: ReadonlyArray<string>
}

const pick = (texts: ReadonlyArray<string>, position: number): string => texts[position % texts.length]!

class SetCommand implements fc.Command<Model, Real> {
  constructor(readonly position: number) {}
  check = () => true
  run(model: Model, real: Real) {
    const text = pick(real.texts, this.position)
    const value = model.nextValue++
    real.memo.set(text, value)
    // The text just set is always found: the memo is not a map that keeps nothing.
    assert.strictEqual(real.memo.get(text), value, `get right after set of ${JSON.stringify(text)}`)
    model.kept.set(text, value)
  }
  toString = () => `set(#${this.position})`
}

class GetCommand implements fc.Command<Model, Real> {
  constructor(readonly position: number) {}
  check = () => true
  run(model: Model, real: Real) {
    const text = pick(real.texts, this.position)
    const answered = real.memo.get(text)
    if (answered === undefined) model.kept.delete(text)
    else assert.strictEqual(answered, model.kept.get(text), `get of ${JSON.stringify(text)}`)
  }
  toString = () => `get(#${this.position})`
}

class DeleteCommand implements fc.Command<Model, Real> {
  constructor(readonly position: number) {}
  check = () => true
  run(model: Model, real: Real) {
    const text = pick(real.texts, this.position)
    real.memo.delete(text)
    assert.isUndefined(real.memo.get(text), `get after delete of ${JSON.stringify(text)}`)
    model.kept.delete(text)
  }
  toString = () => `delete(#${this.position})`
}

/** Deleting a text that shares the kept text's last two characters leaves the kept one alone. */
class DeleteNeighbourCommand implements fc.Command<Model, Real> {
  constructor(
    readonly position: number,
    readonly prefix: string
  ) {}
  check = () => true
  run(model: Model, real: Real) {
    const text = pick(real.texts, this.position)
    const neighbour = this.prefix + text
    const before = real.memo.get(text)
    real.memo.delete(neighbour)
    if (neighbour === text) {
      assert.isUndefined(real.memo.get(text))
      model.kept.delete(text)
      return
    }
    assert.strictEqual(real.memo.get(text), before, `delete of a neighbour of ${JSON.stringify(text)}`)
    if (before === undefined) model.kept.delete(text)
  }
  toString = () => `deleteNeighbour(#${this.position}, ${JSON.stringify(this.prefix)})`
}

class ClearCommand implements fc.Command<Model, Real> {
  check = () => true
  run(model: Model, real: Real) {
    real.memo.clear()
    for (const text of real.texts) assert.isUndefined(real.memo.get(text), `after clear: ${text}`)
    model.kept.clear()
  }
  toString = () => "clear"
}

/** Last two characters from a small set, so that texts collide in a slot all the time. */
const ending = fc.constantFrom("ab", "zQ", "-_", "==", "aa", "A9")
const body = fc.string({ unit: fc.constantFrom("a", "b", "Q", "z", "."), maxLength: 6 })
const headerText = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(body, ending).map(([start, end]) => start + end) },
  // Texts shorter than two characters take another path to their slot.
  { weight: 1, arbitrary: fc.constantFrom("", "a", "b", "Q") }
)

const commands = [
  fc.nat().map((p) => new SetCommand(p)),
  fc.nat().map((p) => new GetCommand(p)),
  fc.nat().map((p) => new DeleteCommand(p)),
  fc
    .tuple(fc.nat(), fc.constantFrom("", "x", "xy", "Bearer "))
    .map(([p, s]) => new DeleteNeighbourCommand(p, s)),
  fc.constant(new ClearCommand())
]

const isPowerOfTwo = (n: number): boolean => n > 0 && Number.isInteger(Math.log2(n))

describe("HeaderMemo", () => {
  it("answers only what an exact-key map that may forget would, whatever the collisions", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 9 }).map((k) => 2 ** k),
        fc.uniqueArray(headerText, { minLength: 1, maxLength: 12 }),
        fc.commands(commands, { maxCommands: 80 }),
        (slots, texts, cmds) => {
          fc.modelRun(
            (): { model: Model; real: Real } => ({
              model: { kept: new Map(), nextValue: 0 },
              real: { memo: new HeaderMemo<number>(slots), texts }
            }),
            cmds
          )
        }
      ),
      { numRuns: 300 }
    )
  })

  it("never answers a text's value for another text ending in the same two characters", () => {
    fc.assert(
      fc.property(body, body, ending, (a, b, end) => {
        fc.pre(a !== b)
        const memo = new HeaderMemo<string>()
        memo.set(a + end, "first")
        assert.isUndefined(memo.get(b + end))
        memo.set(b + end, "second")
        // The slot now holds the second text: the first is forgotten, never answered as the second.
        assert.notStrictEqual(memo.get(a + end), "second")
        assert.strictEqual(memo.get(b + end), "second")
      })
    )
  })

  it("accepts exactly the powers of two as a number of slots", () => {
    fc.assert(
      fc.property(fc.integer({ min: -64, max: 4096 }), (slots) => {
        if (isPowerOfTwo(slots)) new HeaderMemo(slots)
        else assert.throws(() => new HeaderMemo(slots), /power of two/)
      })
    )
    for (const slots of [0.5, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, -2]) {
      assert.throws(() => new HeaderMemo(slots), /power of two/, String(slots))
    }
  })
})

const secret = new Uint8Array(randomBytes(32))
/** A fixed clock: every time below is relative to it. */
const now = Date.UTC(2030, 0, 2, 3, 4, 5)
const lifetimeSeconds = 300

const claimsOf = (userId: number): AccessClaims => ({ userId, deskId: 3, roles: ["viewer"] })

/**
 * Signed by an instance of its own (signing enters a token into the signer's cache): the tokens
 * are valid for the tested instance, which has never verified them.
 */
const signer = new Tokens({ secret })
const signedToken = (userId: number) => signer.signAccess(claimsOf(userId), now, lifetimeSeconds)

/** What `cachedAccessOfHeader` must answer: `cachedAccess` of the token the header carries. */
const byParsing = (tokens: Tokens, header: string, at: number) =>
  Either.match(parseBearerToken(header), {
    onLeft: () => undefined,
    onRight: (token) => tokens.cachedAccess(token, at)
  })

describe("Tokens.cachedAccessOfHeader", () => {
  it.effect("answers nothing for a token never verified, then the caller once it is", () =>
    Effect.gen(function* () {
      const tokens = new Tokens({ secret })
      const { token } = yield* signedToken(7)
      const header = `Bearer ${token}`
      assert.isUndefined(tokens.cachedAccessOfHeader(header, now))
      // Asked twice: the first miss must not have been remembered as an answer.
      assert.isUndefined(tokens.cachedAccessOfHeader(header, now))
      const verified = yield* tokens.verifyAccess(token, now)
      assert.strictEqual(verified.caller.userId, 7)
      // The first answer parses the header, the second finds it by its text: both the same caller.
      assert.deepStrictEqual(tokens.cachedAccessOfHeader(header, now), verified)
      assert.deepStrictEqual(tokens.cachedAccessOfHeader(header, now), verified)
    })
  )

  it.effect("answers nothing after clearCache, even for a header it found by its text before", () =>
    Effect.gen(function* () {
      const tokens = new Tokens({ secret })
      const { token } = yield* signedToken(7)
      const header = `Bearer ${token}`
      yield* tokens.verifyAccess(token, now)
      assert.isDefined(tokens.cachedAccessOfHeader(header, now))
      assert.isDefined(tokens.cachedAccessOfHeader(header, now))
      tokens.clearCache()
      assert.isUndefined(tokens.cachedAccessOfHeader(header, now))
      assert.isUndefined(tokens.cachedAccess(token, now))
    })
  )

  it.effect("answers nothing once the token has expired, though its header was found before", () =>
    Effect.gen(function* () {
      const tokens = new Tokens({ secret })
      const { token, expiresAt } = yield* signedToken(7)
      const header = `Bearer ${token}`
      yield* tokens.verifyAccess(token, now)
      assert.isDefined(tokens.cachedAccessOfHeader(header, now))
      // The last moment it stands, answered from the memo, then the expiry (exclusive).
      assert.strictEqual(tokens.cachedAccessOfHeader(header, expiresAt - 1)?.caller.userId, 7)
      assert.isUndefined(tokens.cachedAccessOfHeader(header, expiresAt))
      assert.isUndefined(tokens.cachedAccessOfHeader(header, expiresAt + 60_000))
    })
  )

  it.effect("answers a malformed or other-scheme header as cachedAccess of its parsed token would", () =>
    Effect.gen(function* () {
      const tokens = new Tokens({ secret })
      const { token } = yield* signedToken(7)
      yield* tokens.verifyAccess(token, now)
      const headers = [
        `Basic ${token}`,
        "Bearer",
        "Bearer ",
        "bearer",
        "",
        " ",
        `bearer ${token}`,
        `BEARER ${token}`,
        `Bearer  ${token}`,
        ` Bearer ${token}`,
        `Bearer ${token} `,
        `Bearer ${token},Bearer ${token}`,
        `Bearer ${token}x`,
        `Bearer ${token.slice(0, -1)}`,
        `Bearer\t${token}`,
        token,
        `Bearer ${token}`
      ]
      // Twice over: the second round answers from the memo where the first remembered a header.
      for (const round of [1, 2]) {
        for (const header of headers) {
          assert.deepStrictEqual(
            tokens.cachedAccessOfHeader(header, now),
            byParsing(tokens, header, now),
            `round ${round}: ${JSON.stringify(header.replace(token, "<token>"))}`
          )
        }
      }
      // The parser's own verdicts, so that the comparison above is not vacuous.
      assert.strictEqual(tokens.cachedAccessOfHeader(`bearer ${token}`, now)?.caller.userId, 7)
      assert.isUndefined(tokens.cachedAccessOfHeader(`Basic ${token}`, now))
      assert.isUndefined(tokens.cachedAccessOfHeader("Bearer", now))
    })
  )

  it.effect("two tokens whose headers share a slot each answer their own caller", () =>
    Effect.gen(function* () {
      // Headers that end in the same two characters share a slot whatever the memo's size.
      const byEnding = new Map<string, { readonly token: string; readonly userId: number }>()
      let pair: readonly [{ token: string; userId: number }, { token: string; userId: number }] | undefined
      for (let userId = 1; pair === undefined && userId <= 5000; userId++) {
        const { token } = yield* signedToken(userId)
        const end = token.slice(-2)
        const earlier = byEnding.get(end)
        if (earlier === undefined) byEnding.set(end, { token, userId })
        else pair = [earlier, { token, userId }]
      }
      assert.isDefined(pair, "two signed tokens ending in the same two characters")
      const [first, second] = pair!
      const tokens = new Tokens({ secret })
      const firstHeader = `Bearer ${first.token}`
      const secondHeader = `Bearer ${second.token}`
      yield* tokens.verifyAccess(first.token, now)
      assert.strictEqual(tokens.cachedAccessOfHeader(firstHeader, now)?.caller.userId, first.userId)
      // The slot holds the first header: the second, never verified, is not answered from it.
      assert.isUndefined(tokens.cachedAccessOfHeader(secondHeader, now))
      yield* tokens.verifyAccess(second.token, now)
      for (let i = 0; i < 3; i++) {
        assert.strictEqual(tokens.cachedAccessOfHeader(secondHeader, now)?.caller.userId, second.userId)
        assert.strictEqual(tokens.cachedAccessOfHeader(firstHeader, now)?.caller.userId, first.userId)
      }
    })
  )
})
