import { assert, describe, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { decodeRequestEither, formatIssuePath } from "../../src/api/Decode.js"
import { object } from "../../src/api/Objects.js"
import { findRefusedText, textIssue } from "../../src/api/StorableText.js"
import { examples } from "./examples.js"

/**
 * Issue 12, class 3: text PostgreSQL cannot store (U+0000, lone surrogates) and control characters
 * are refused at the boundary with a 400 naming the field, in every string field of every request.
 */

const refused: ReadonlyArray<readonly [string, string]> = [
  ["\u0000", "must not contain the control character U+0000"],
  ["\ud800", "must not contain a lone surrogate (U+D800)"],
  ["\udfff", "must not contain a lone surrogate (U+DFFF)"],
  ["\u0007", "must not contain the control character U+0007"],
  ["\n", "must not contain the control character U+000A"],
  ["\u007f", "must not contain the control character U+007F"],
  ["\u009b", "must not contain the control character U+009B"]
]

/** Text a client may well mean: right-to-left marks, zero-width joiners, emoji, CJK. */
const accepted = ["\u202eevil\u202c", "\u200f\u05e9\u05dc\u05d5\u05dd", "👩‍💻", "日本", "a\ufeff", "\uffff"]

describe("textIssue", () => {
  it("names the first refused code unit", () => {
    for (const [text, message] of refused) {
      assert.strictEqual(textIssue(`ok${text}ok`), message)
      assert.strictEqual(textIssue(text), message)
    }
    assert.strictEqual(textIssue("a\ud83d"), "must not contain a lone surrogate (U+D83D)")
    assert.strictEqual(textIssue("\ude00b"), "must not contain a lone surrogate (U+DE00)")
    assert.strictEqual(textIssue("\ud83d\ud83d\ude00"), "must not contain a lone surrogate (U+D83D)")
  })

  it("accepts every other character, surrogate pairs included", () => {
    for (const text of accepted) assert.isUndefined(textIssue(text), JSON.stringify(text))
    assert.isUndefined(textIssue("plain ascii ~!@#$%^&*()_+{}|:<>?"))
  })
})

type Leaf = { readonly path: ReadonlyArray<PropertyKey>; readonly value: string }

const stringLeaves = (value: unknown, path: ReadonlyArray<PropertyKey> = []): Array<Leaf> => {
  if (typeof value === "string") return [{ path, value }]
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...path, i]))
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]))
  }
  return []
}

const replaced = (value: unknown, path: ReadonlyArray<PropertyKey>, leaf: string): unknown => {
  if (path.length === 0) return leaf
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? replaced(v, rest, leaf) : v))
  const record = value as Record<string, unknown>
  return { ...record, [head as string]: replaced(record[head as string], rest, leaf) }
}

const decodes = (schema: Schema.Schema<any, any>, input: unknown) =>
  Either.isRight(decodeRequestEither(schema, input))

describe("every string field of every request", () => {
  it("refuses U+0000, lone surrogates and control characters with a 400 naming the field", () => {
    let freeText = 0
    for (const { name, schema, input } of examples) {
      for (const { path, value } of stringLeaves(input)) {
        const field = formatIssuePath(path)
        // A field that takes any text (a label, alias, id, nonce, secret) and not only a literal.
        const isFreeText = decodes(schema, replaced(input, path, `${value}\u200f`))
        if (isFreeText) freeText++
        for (const [text, message] of refused) {
          for (const hostile of [`${value}${text}`, `${text}${value}`]) {
            const result = decodeRequestEither(schema, replaced(input, path, hostile))
            assert.isTrue(Either.isLeft(result), `${name}.${field} accepted ${JSON.stringify(hostile)}`)
            if (Either.isRight(result)) continue
            const body = result.left.toBody()
            // An exchange code outside the list is the spec's 404 `exchange not found`.
            assert.strictEqual(body.code, path.at(-1) === "exchange" && !isFreeText ? 404 : 400)
            const reasons = body.reason ?? []
            assert.isTrue(
              reasons.some((r) => r.startsWith(`${field}: `)),
              `${name}.${field}: reasons ${JSON.stringify(reasons)} do not name the field`
            )
            if (isFreeText) assert.include(reasons, `${field}: ${message}`)
          }
        }
      }
    }
    // label, instrument names, maker ids, alias, clientId, clientSecret, nonce, credentials
    // aliases, client_id, client_secret, clientId, clientSecret, refreshToken: the search found them.
    assert.isAtLeast(freeText, 30)
  })

  it("keeps accepted text exactly as sent", () => {
    const createCredentials = examples.find((e) => e.name === "CreateExchangeCredentialsRequest")!
    for (const text of accepted) {
      const result = decodeRequestEither(createCredentials.schema, {
        ...createCredentials.input,
        alias: text
      })
      assert.isTrue(Either.isRight(result), JSON.stringify(text))
      if (Either.isRight(result)) assert.strictEqual(result.right.alias, text)
    }
  })
})

describe("the net under every field", () => {
  // A schema whose string has no text check of its own, as a forgotten field would be.
  const Forgotten = object({ name: Schema.String, tags: Schema.Array(Schema.String) })

  it("refuses refused text in a decoded request whatever its schema says", () => {
    const result = decodeRequestEither(Forgotten, { name: "ok", tags: ["fine", "b\u0000d"] })
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.deepStrictEqual(result.left.toBody(), {
        code: 400,
        message: "invalid request",
        reason: ["tags[1]: must not contain the control character U+0000"]
      })
    }
    assert.isTrue(Either.isRight(decodeRequestEither(Forgotten, { name: "ok\u202e", tags: [] })))
  })

  it("searches keys and nested values, not decimals or other objects", () => {
    assert.deepStrictEqual(findRefusedText({ a: [{ "k\ud800": 1 }] }), {
      path: ["a", 0, "k\ud800"],
      message: "key must not contain a lone surrogate (U+D800)"
    })
    assert.isUndefined(findRefusedText({ a: new Map([["\u0000", "\u0000"]]), b: 1, c: null }))
  })
})
