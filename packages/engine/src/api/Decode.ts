import { Effect, Either, Option, ParseResult, type Schema, SchemaAST } from "effect"
import { type ApiError, apiError, type ErrorKey } from "../domain/Errors.js"
import { type ErrorKeyAnnotation, ErrorKeyId, mustBeOneOf, showValue } from "./Messages.js"
import { findRefusedText } from "./StorableText.js"

/**
 * Turns a client's JSON (body, query or path values, JSON-RPC params) into a typed request, or
 * into the spec's 400 with one readable `reason` per problem: `legs[1].ratio: expected a number,
 * got "x"`. Unknown properties are ignored and absent from the result (settlement-option maps are
 * the exception: they refuse unknown keys). Never throws on any JSON input.
 */

/** One problem of a request: where, what, and which catalog entry it belongs to. */
export interface RequestProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly key: ErrorKey
}

/** At most this many reasons are listed; a body with thousands of bad elements stays readable. */
export const maxRequestReasons = 20

const parseOptions: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "ignore", exact: true }

const identifierLike = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** `legs[1].ratio`, `makers.DBT[0]`, `makers["foo bar"]`. */
export const formatIssuePath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((segment, i) => {
      if (typeof segment === "number") return `[${segment}]`
      const name = typeof segment === "symbol" ? String(segment) : segment
      if (identifierLike.test(name)) return i === 0 ? name : `.${name}`
      return `[${showValue(name)}]`
    })
    .join("")

const keyOf = (ast: SchemaAST.AST, actual: unknown): ErrorKey | undefined => {
  const key = ast.annotations[ErrorKeyId] as ErrorKeyAnnotation | undefined
  return typeof key === "function" ? key(actual) : key
}

const annotatedMessage = (
  issue: ParseResult.ParseIssue
): { message: string; override: boolean } | undefined => {
  if (!("ast" in issue)) return undefined
  const annotation = SchemaAST.getMessageAnnotation(issue.ast)
  if (Option.isNone(annotation)) return undefined
  const out = annotation.value(issue)
  // Our annotations are synchronous; an effectful message falls back to the structural default.
  if (typeof out === "string") return { message: out, override: false }
  if (typeof out === "object" && out !== null && "message" in out && typeof out.message === "string") {
    return { message: out.message, override: out.override === true }
  }
  return undefined
}

const literalValues = (ast: SchemaAST.AST): Array<string> | undefined => {
  if (SchemaAST.isLiteral(ast)) return [String(ast.literal)]
  if (SchemaAST.isUnion(ast)) {
    const parts = ast.types.map(literalValues)
    return parts.every((p): p is Array<string> => p !== undefined) ? parts.flat() : undefined
  }
  return undefined
}

const expectation = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "a boolean"
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "an array"
    case "Refinement":
      return expectation(ast.from)
    case "Transformation":
      return expectation(ast.from)
    case "Union":
      return [...new Set(ast.types.map(expectation))].join(" or ")
    default:
      return "a valid value"
  }
}

const defaultTypeMessage = (ast: SchemaAST.AST, actual: unknown): string => {
  const literals = literalValues(ast)
  if (literals !== undefined) return mustBeOneOf(literals)
  return `expected ${expectation(ast)}, got ${showValue(actual)}`
}

const unexpectedMessage = (issue: ParseResult.Unexpected): string => {
  const expected = issue.message?.match(/expected: (.*)$/)?.[1]
  return expected === undefined
    ? "is not allowed"
    : `is not allowed (expected ${expected.replaceAll(" | ", " or ")})`
}

/** True when the input is not even of the schema's kind (a string where an array is expected). */
const isShapeMismatch = (issue: ParseResult.ParseIssue): boolean => {
  switch (issue._tag) {
    case "Type":
      return !SchemaAST.isRefinement(issue.ast) && !SchemaAST.isTransformation(issue.ast)
    case "Refinement":
      return issue.kind === "From" && isShapeMismatch(issue.issue)
    case "Transformation":
      return issue.kind === "Encoded" && isShapeMismatch(issue.issue)
    case "Composite":
      return (
        SchemaAST.isUnion(issue.ast) &&
        (Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]).every(
          isShapeMismatch
        )
      )
    default:
      return false
  }
}

const collect = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey>,
  out: Array<RequestProblem>,
  inheritedKey: ErrorKey | undefined
): void => {
  const push = (message: string, key: ErrorKey | undefined) =>
    out.push({ path, message, key: key ?? inheritedKey ?? "invalidRequest" })
  switch (issue._tag) {
    case "Pointer":
      collect(issue.issue, path.concat(issue.path), out, undefined)
      return
    case "Missing":
      push("is missing", undefined)
      return
    case "Unexpected":
      push(unexpectedMessage(issue), undefined)
      return
    case "Forbidden":
      push("could not be checked", undefined)
      return
    case "Type": {
      const annotated = annotatedMessage(issue)
      push(
        annotated?.message ?? issue.message ?? defaultTypeMessage(issue.ast, issue.actual),
        keyOf(issue.ast, issue.actual)
      )
      return
    }
    case "Refinement":
    case "Transformation": {
      const annotated = annotatedMessage(issue)
      const ownFailure =
        issue._tag === "Refinement" ? issue.kind === "Predicate" : issue.kind === "Transformation"
      if (annotated !== undefined && (annotated.override || ownFailure)) {
        push(annotated.message, keyOf(issue.ast, issue.actual))
        return
      }
      collect(
        issue.issue,
        path,
        out,
        ownFailure ? (keyOf(issue.ast, issue.actual) ?? inheritedKey) : inheritedKey
      )
      return
    }
    case "Composite": {
      const annotated = annotatedMessage(issue)
      if (annotated?.override) {
        push(annotated.message, keyOf(issue.ast, issue.actual))
        return
      }
      const issues: ReadonlyArray<ParseResult.ParseIssue> = Array.isArray(issue.issues)
        ? issue.issues
        : [issue.issues as ParseResult.ParseIssue]
      if (SchemaAST.isUnion(issue.ast)) {
        // Report the members whose shape the input had; if none, one "expected X or Y" message.
        const matched = issues.filter((member) => !isShapeMismatch(member))
        if (matched.length === 0) {
          push(defaultTypeMessage(issue.ast, issue.actual), keyOf(issue.ast, issue.actual))
          return
        }
        for (const member of matched) collect(member, path, out, inheritedKey)
        return
      }
      for (const inner of issues) collect(inner, path, out, inheritedKey)
      return
    }
  }
}

/** The problems of a failed decode, deduplicated, in the order found. */
export const requestProblems = (issue: ParseResult.ParseIssue): Array<RequestProblem> => {
  const all: Array<RequestProblem> = []
  collect(issue, [], all, undefined)
  const seen = new Set<string>()
  return all.filter((p) => {
    const text = reasonText(p)
    if (seen.has(text)) return false
    seen.add(text)
    return true
  })
}

const reasonText = (p: Pick<RequestProblem, "path" | "message">): string =>
  p.path.length === 0 ? p.message : `${formatIssuePath(p.path)}: ${p.message}`

/**
 * The catalog entry for a set of problems: a specific one (`empty value`, `exchange not found`,
 * `failed to convert ratio to int`) only when every problem agrees on it, else `invalid request`.
 */
const errorKeyOf = (problems: ReadonlyArray<RequestProblem>): ErrorKey => {
  const first = problems[0]?.key ?? "invalidRequest"
  return problems.every((p) => p.key === first) ? first : "invalidRequest"
}

/** The ApiError for a failed decode: status 400 (404 for an unknown exchange), readable reasons. */
export const toApiError = (issue: ParseResult.ParseIssue): ApiError => {
  const problems = requestProblems(issue)
  const reasons = problems.slice(0, maxRequestReasons).map(reasonText)
  if (problems.length > maxRequestReasons)
    reasons.push(`… and ${problems.length - maxRequestReasons} more problems`)
  return apiError(errorKeyOf(problems), reasons)
}

/** Decodes `input` with `schema`, failing with the spec's error body on any problem. */
export const decodeRequest = <A, I>(
  schema: Schema.Schema<A, I, never>,
  input: unknown
): Effect.Effect<A, ApiError> =>
  Either.match(decodeRequestEither(schema, input), { onLeft: Effect.fail, onRight: Effect.succeed })

/**
 * The synchronous form of `decodeRequest`, for callers outside Effect. A decoded request holding
 * text the service refuses (`findRefusedText`: a field whose schema forgot the text check) is a 400
 * naming the field, so no such string reaches the engine or storage.
 */
export const decodeRequestEither = <A, I>(
  schema: Schema.Schema<A, I, never>,
  input: unknown
): Either.Either<A, ApiError> =>
  Either.flatMap(
    Either.mapLeft(ParseResult.decodeUnknownEither(schema, parseOptions)(input), toApiError),
    (decoded) => {
      const refused = findRefusedText(decoded)
      return refused === undefined
        ? Either.right(decoded)
        : Either.left(apiError("invalidRequest", [reasonText(refused)]))
    }
  )
