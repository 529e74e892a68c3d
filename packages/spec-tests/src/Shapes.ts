import {
  AuthResponse,
  BulkBlockTradeResponse,
  CancelAllQuotesResponse,
  CancelRfqResponse,
  CreateExchangeCredentialsResponse,
  CreateQuoteResponse,
  CreateRfqResponse,
  DeleteExchangeCredentialsResponse,
  DeleteQuoteResponse,
  DeleteRfqResponse,
  ErrorBody,
  ExchangeCredentialsDetail,
  ExchangeCredentialsList,
  HealthResponse,
  InstrumentListings,
  LegPricesResponse,
  MakerList,
  MmpConfig,
  MmpConfigList,
  MmpDeleteResponse,
  MmpStatus,
  MmpStatusList,
  OAuthTokenResponse,
  OtcCounterpartyList,
  PublicTradePage,
  QuotePage,
  Rfq,
  RfqPage,
  TakerQuotesResponse,
  TokenErrorBody,
  TradeResponse,
  UpdateQuoteResponse
} from "@rfq/engine"
import { Either, ParseResult, Schema } from "effect"
import type { ApiResponse } from "./ApiClient.js"

/**
 * The documented response shapes (the engine's schemas, which also generate the OpenAPI document),
 * checked on their encoded (JSON) side with refinements and no unknown property allowed: a field
 * the schema does not name, a missing one or a wrong type fails the check, so behaviour and
 * documented shapes cannot drift apart unnoticed.
 */
export const shapes = {
  AuthResponse,
  BulkBlockTradeResponse,
  CancelAllQuotesResponse,
  CancelRfqResponse,
  CreateExchangeCredentialsResponse,
  CreateQuoteResponse,
  CreateRfqResponse,
  DeleteExchangeCredentialsResponse,
  DeleteQuoteResponse,
  DeleteRfqResponse,
  ErrorBody,
  ExchangeCredentialsDetail,
  ExchangeCredentialsList,
  HealthResponse,
  InstrumentListings,
  LegPricesResponse,
  MakerList,
  MmpConfig,
  MmpConfigList,
  MmpDeleteResponse,
  MmpStatus,
  MmpStatusList,
  OAuthTokenResponse,
  OtcCounterpartyList,
  PublicTradePage,
  QuotePage,
  Rfq,
  RfqPage,
  TakerQuotesResponse,
  TokenErrorBody,
  TradeResponse,
  UpdateQuoteResponse
} as const satisfies Record<string, Schema.Schema<any, any>>

export type ShapeName = keyof typeof shapes

const validators = new Map<ShapeName, (u: unknown) => Either.Either<unknown, ParseResult.ParseError>>()

const validatorOf = (name: ShapeName) => {
  let validate = validators.get(name)
  if (validate === undefined) {
    const schema = Schema.encodedBoundSchema(shapes[name] as Schema.Schema<unknown, unknown>)
    validate = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })
    validators.set(name, validate)
  }
  return validate
}

/**
 * The problems of `body` against the shape, one line each (array positions folded into `[]`, so a
 * drift repeated over a list reads once); empty when it conforms.
 */
export const shapeProblems = (name: ShapeName, body: unknown): Array<string> => {
  const result = validatorOf(name)(body)
  if (Either.isRight(result)) return []
  const lines = ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) => {
    const where =
      issue.path.length === 0
        ? "(root)"
        : issue.path
            .map((p) => (typeof p === "number" ? "[]" : `.${String(p)}`))
            .join("")
            .replace(/^\./, "")
    const message = issue.message.startsWith("is unexpected")
      ? "is not in the documented shape"
      : issue.message
    return `${where}: ${message}`
  })
  return [...new Set(lines)]
}

export class ShapeMismatch extends Error {
  constructor(
    readonly shape: ShapeName,
    readonly problems: ReadonlyArray<string>,
    readonly body: unknown
  ) {
    super(
      `response does not match ${shape}:\n  ${problems.slice(0, 20).join("\n  ")}\nbody: ${JSON.stringify(body).slice(0, 2000)}`
    )
    this.name = "ShapeMismatch"
  }
}

/** Throws a readable error unless `body` has the documented shape; returns it typed for reading. */
export const assertShape = <T = any>(name: ShapeName, body: unknown): T => {
  const problems = shapeProblems(name, body)
  if (problems.length > 0) throw new ShapeMismatch(name, problems, body)
  return body as T
}

/**
 * A response with the expected status whose body has the documented shape. Any other status is
 * reported with its body, which is what one needs to see when a check fails.
 */
export const expectOk = <T = any>(response: ApiResponse, shape: ShapeName, status = 200): T => {
  if (response.status !== status) {
    throw new Error(
      `expected HTTP ${status} (${shape}), got ${response.status}: ${response.text.slice(0, 2000)}`
    )
  }
  return assertShape<T>(shape, response.body)
}

export interface ErrorExpectation {
  readonly status: number
  readonly message: string
  /** Each must occur, as a substring, in one of the body's reasons. */
  readonly reasonIncludes?: ReadonlyArray<string>
  /** The token endpoints add RFC 6749's `error` code. */
  readonly oauthError?: string
}

/** The standard error body with `code` equal to the status and the spec's message. */
export const expectError = (response: ApiResponse, expected: ErrorExpectation): void => {
  const { status, message } = expected
  const describe = () => `${response.status} ${response.text.slice(0, 2000)}`
  if (response.status !== status) throw new Error(`expected HTTP ${status} "${message}", got ${describe()}`)
  const body = assertShape<{ code: number; message: string; reason?: Array<string>; error?: string }>(
    expected.oauthError === undefined ? "ErrorBody" : "TokenErrorBody",
    response.body
  )
  if (body.code !== status) throw new Error(`error body code ${body.code} differs from the status ${status}`)
  if (body.message !== message) throw new Error(`expected message "${message}", got ${describe()}`)
  for (const part of expected.reasonIncludes ?? []) {
    if (!(body.reason ?? []).some((r) => r.includes(part))) {
      throw new Error(`expected a reason containing "${part}", got ${describe()}`)
    }
  }
  if (expected.oauthError !== undefined && body.error !== expected.oauthError) {
    throw new Error(`expected error "${expected.oauthError}", got ${describe()}`)
  }
}
