import { assert, describe, it } from "@effect/vitest"
import { BigDecimal, Effect, Either, type Schema, SchemaAST } from "effect"
import * as fc from "fast-check"
import {
  decodeRequest,
  decodeRequestEither,
  formatIssuePath,
  maxRequestReasons
} from "../../src/api/Decode.js"
import { CreateRfqRequest, LegPricesRequest } from "../../src/api/RfqRequests.js"
import { ApiError } from "../../src/domain/Errors.js"
import { examples } from "./examples.js"
import { requestSchemas } from "./schemas.js"
import { assertBad, decodeErr, decodeOk } from "./support.js"

const RUNS_PER_SCHEMA = 60
const MUTATION_RUNS = 300
const EXTRA_FIELD_RUNS = 200
const DECIMAL_RUNS = 500

/** The outcome invariant: a value, or an ApiError with status 400/404 and at least one reason. */
const assertOutcome = (schema: Schema.Schema<any, any>, input: unknown) => {
  const result = decodeRequestEither(schema, input)
  if (Either.isRight(result)) return
  const error = result.left
  assert.instanceOf(error, ApiError)
  assert.include([400, 404], error.status)
  assert.isAbove(error.reason?.length ?? 0, 0)
  for (const reason of error.reason ?? []) assert.isString(reason)
}

describe("decodeRequest never throws", () => {
  // One test per schema: a failure names the schema, and no test grows with the number of schemas.
  for (const [name, schema] of requestSchemas) {
    it(`${name}: on arbitrary JSON`, () => {
      fc.assert(
        fc.property(fc.jsonValue(), (input) => assertOutcome(schema, input)),
        { numRuns: RUNS_PER_SCHEMA, examples: [[null], [[]], [""], [0], [-0]] }
      )
    })
    it(`${name}: on arbitrary JavaScript values`, () => {
      fc.assert(
        fc.property(
          fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }),
          (input) => assertOutcome(schema, input)
        ),
        { numRuns: RUNS_PER_SCHEMA }
      )
    })
  }

  /** Every path into a JSON value, objects and arrays included. */
  const pathsOf = (
    value: unknown,
    prefix: ReadonlyArray<string | number> = []
  ): Array<Array<string | number>> => {
    if (Array.isArray(value)) return value.flatMap((v, i) => [[...prefix, i], ...pathsOf(v, [...prefix, i])])
    if (typeof value === "object" && value !== null) {
      return Object.entries(value).flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k])])
    }
    return []
  }
  const replaceAt = (value: unknown, path: ReadonlyArray<string | number>, replacement: unknown): unknown => {
    if (path.length === 0) return replacement
    const [head, ...rest] = path
    const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) }
    copy[head as never] = replaceAt(copy[head as never], rest, replacement)
    return copy
  }

  it("on valid requests with one value replaced by arbitrary JSON", () => {
    const mutation = fc
      .constantFrom(...examples)
      .chain((example) =>
        fc.tuple(
          fc.constant(example),
          fc.constantFrom(...pathsOf(example.input)),
          fc.jsonValue({ maxDepth: 3 })
        )
      )
    fc.assert(
      fc.property(mutation, ([example, path, replacement]) =>
        assertOutcome(example.schema, replaceAt(example.input, path, replacement))
      ),
      { numRuns: MUTATION_RUNS }
    )
  })

  it("on deeply nested input where a scalar or an object is expected", () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    let deepObject: unknown = {}
    for (let i = 0; i < 100_000; i++) deepObject = { a: deepObject }
    for (const { schema, input } of examples) {
      assertOutcome(schema, deep)
      assertOutcome(schema, deepObject)
      for (const key of Object.keys(input)) {
        assertOutcome(schema, { ...input, [key]: deep })
        assertOutcome(schema, { ...input, [key]: deepObject })
      }
    }
  })

  it("on values that cannot be turned into strings", () => {
    const hostile = [
      JSON.parse('{"toString":1,"valueOf":2}'),
      Object.create(null),
      [JSON.parse('{"toString":1}')]
    ]
    for (const { schema, input } of examples) {
      for (const value of hostile) {
        assertOutcome(schema, value)
        for (const key of Object.keys(input)) assertOutcome(schema, { ...input, [key]: value })
      }
    }
  })

  it("on a huge string value: the reason quotes only its start", () => {
    const reasons =
      decodeErr(CreateRfqRequest, { ...examples[0]!.input, amount: "9".repeat(1_000_000) }).reason ?? []
    const amountReason = reasons.find((r) => r.startsWith("amount:")) ?? ""
    assert.isBelow(amountReason.length, 100)
  })
})

describe("decoded requests contain only known keys", () => {
  const knownKeys = (ast: SchemaAST.AST): Set<PropertyKey> => {
    const encoded = SchemaAST.encodedAST(ast)
    const members = SchemaAST.isUnion(encoded) ? encoded.types : [encoded]
    return new Set(members.flatMap((m) => SchemaAST.getPropertySignatures(m).map((p) => p.name)))
  }
  const serialized = (u: unknown) => JSON.stringify(u)
  const extraKey = fc.oneof(
    fc.constantFrom(
      "status",
      "deskId",
      "userId",
      "role",
      "rfqId",
      "id",
      "__proto__",
      "constructor",
      "toString"
    ),
    fc.string({ minLength: 1, maxLength: 12 })
  )

  it("adding unknown top-level fields changes nothing", () => {
    const withExtras = fc.constantFrom(...examples).chain((example) =>
      fc.tuple(
        fc.constant(example),
        fc.uniqueArray(
          fc.tuple(
            extraKey.filter((k) => !knownKeys(example.schema.ast).has(k)),
            fc.jsonValue({ maxDepth: 2 })
          ),
          { minLength: 1, maxLength: 4, selector: ([k]) => k }
        )
      )
    )
    fc.assert(
      fc.property(withExtras, ([example, extras]) => {
        const input: Record<string, unknown> = { ...example.input }
        for (const [key, value] of extras) {
          Object.defineProperty(input, key, { value, enumerable: true, configurable: true, writable: true })
        }
        const baseline = decodeOk(example.schema, example.input)
        const decoded = decodeOk(example.schema, input)
        assert.strictEqual(serialized(decoded), serialized(baseline))
        for (const [key] of extras) assert.isFalse(Object.hasOwn(decoded, key), `kept ${key}`)
        assert.strictEqual(Object.getPrototypeOf(decoded), Object.prototype)
      }),
      { numRuns: EXTRA_FIELD_RUNS }
    )
  })
})

describe("money decodes exactly", () => {
  const MAX_MANTISSA = 10n ** 15n - 1n
  const MAX_SCALE = 12

  it("a JSON decimal with ≤ 15 significant digits decodes to exactly that decimal", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -MAX_MANTISSA, max: MAX_MANTISSA }),
        fc.integer({ min: 0, max: MAX_SCALE }),
        (mantissa, scale) => {
          const expected = BigDecimal.make(mantissa, scale)
          const json = `{"rfqId":1,"price":${BigDecimal.format(expected)},"legs":[{"direction":"buy","instrumentName":"X","ratio":1}]}`
          const request = decodeOk(LegPricesRequest, JSON.parse(json))
          assert.isTrue(
            BigDecimal.equals(request.price, expected),
            `${json} → ${BigDecimal.format(request.price)}`
          )
        }
      ),
      { numRuns: DECIMAL_RUNS }
    )
  })

  it("converting back to a number loses nothing for any finite double", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (price) => {
        const request = decodeOk(LegPricesRequest, {
          rfqId: 1,
          price,
          legs: [{ direction: "buy", instrumentName: "X", ratio: 1 }]
        })
        assert.isTrue(Object.is(BigDecimal.unsafeToNumber(request.price), price === 0 ? 0 : price))
      }),
      { numRuns: DECIMAL_RUNS }
    )
  })
})

describe("error shape", () => {
  it.effect("decodeRequest fails with an ApiError of status 400", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(decodeRequest(CreateRfqRequest, { amount: 0 }))
      assert.strictEqual(error._tag, "ApiError")
      assert.strictEqual(error.status, 400)
      assert.include(error.reason ?? [], "amount: must be greater than 0")
      assert.include(error.reason ?? [], "legs: is missing")
    })
  )

  it("only empty values give 'empty value'; mixed problems give 'invalid request'", () => {
    const base = examples[0]!.input
    assertBad(CreateRfqRequest, {
      name: "two empties",
      input: { ...base, label: "", legs: [{ direction: "buy", instrumentName: "", ratio: 1 }] },
      message: "empty value",
      reason: "label: must not be empty"
    })
    assertBad(CreateRfqRequest, {
      name: "empty and wrong",
      input: { ...base, label: "", amount: -1 },
      message: "invalid request",
      reason: "label: must not be empty"
    })
  })

  it("lists at most maxRequestReasons reasons and says how many more there were", () => {
    const legs = Array.from({ length: 60 }, () => ({ direction: "up", instrumentName: "X", ratio: 1 }))
    const reasons = decodeErr(CreateRfqRequest, { ...examples[0]!.input, legs }).reason ?? []
    assert.strictEqual(reasons.length, maxRequestReasons + 1)
    assert.match(reasons[maxRequestReasons] ?? "", /^… and \d+ more problems$/)
  })

  it("formats paths like JavaScript accessors", () => {
    assert.strictEqual(formatIssuePath(["legs", 1, "ratio"]), "legs[1].ratio")
    assert.strictEqual(formatIssuePath(["makers", "DBT", 0]), "makers.DBT[0]")
    assert.strictEqual(formatIssuePath(["makers", "foo bar"]), 'makers["foo bar"]')
    assert.strictEqual(formatIssuePath([0, "a"]), "[0].a")
  })
})
