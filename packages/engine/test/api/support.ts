import { assert } from "@effect/vitest"
import { BigDecimal, Either, type Schema } from "effect"
import type { ApiError } from "../../src/domain/Errors.js"
import { decodeRequestEither } from "../../src/api/Decode.js"

/** Decodes and returns the value; fails the test with the error body otherwise. */
export const decodeOk = <A, I>(schema: Schema.Schema<A, I>, input: unknown): A =>
  Either.getOrElse(decodeRequestEither(schema, input), (e) => {
    throw new Error(`expected a decoded value, got ${JSON.stringify(e.toBody())}`)
  })

/** Decodes and returns the ApiError; fails the test if the input decoded. */
export const decodeErr = <A, I>(schema: Schema.Schema<A, I>, input: unknown): ApiError =>
  Either.match(decodeRequestEither(schema, input), {
    onLeft: (e) => e,
    onRight: () => {
      throw new Error(`expected a decoding failure for ${JSON.stringify(input)}`)
    }
  })

export const assertDecimal = (actual: BigDecimal.BigDecimal | undefined, expected: string) => {
  assert.isDefined(actual)
  const exp = BigDecimal.unsafeFromString(expected)
  assert.isTrue(
    BigDecimal.equals(actual!, exp),
    `expected ${expected}, got ${actual === undefined ? "nothing" : BigDecimal.format(actual)}`
  )
}

/** A row of a bad-input table: the error's message and one reason it must list. */
export interface BadCase {
  readonly name: string
  readonly input: unknown
  readonly message: string
  readonly reason: string
  readonly status?: number
}

export const assertBad = <A, I>(schema: Schema.Schema<A, I>, row: BadCase) => {
  const error = decodeErr(schema, row.input)
  const body = error.toBody()
  assert.strictEqual(body.code, row.status ?? 400)
  assert.strictEqual(body.message, row.message)
  assert.include(body.reason ?? [], row.reason, `reasons were ${JSON.stringify(body.reason)}`)
}

/** Copies `base` with `patch` applied at the top level (undefined removes a key). */
export const withFields = (
  base: Record<string, unknown>,
  patch: Record<string, unknown>
): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete out[k]
    else out[k] = v
  }
  return out
}
