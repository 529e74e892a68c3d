import {
  type Access,
  type ApiError,
  type Caller,
  decodeRequestEither,
  type EngineService,
  apiError,
  mayAccess
} from "@rfq/engine"
import { Effect, Either, type Schema } from "effect"
import type { Operation } from "./Operations.js"

/**
 * The one path of a call into the service, REST and JSON-RPC alike:
 *
 *   authenticate → rate limit → role → decode → run → map error
 *
 * - authenticate: REST checks the bearer token of every request (`RestRoutes.ts`); a WebSocket
 *   session authenticates once, and each call first checks that its token still stands
 *   (`ws/SessionMethods.ts`). Both ask the same `Auth` service and its caches.
 * - rate limit: per user once authenticated, from the same `RateLimiter`. REST counts every
 *   request around the router, 404s and token requests included, per peer address before
 *   authentication (`rateLimitAround` in `App.ts`); JSON-RPC counts each call of a user.
 * - role → decode → run: `startCall` below, for both. The role check is the engine's `mayAccess`
 *   with `requireRole`'s refusal (its commands and queries check it again); it runs here before
 *   decoding, as it always has, so a viewer's write with an unreadable body is 403 `insufficient
 *   permissions`, not 400. Role and decoding are plain code: only the run is an Effect.
 * - map error: `ErrorTable.ts`, for both.
 */

/** The raw input of a call, read only once the role allows it (a REST body may not even parse). */
export type RawInput = () => Either.Either<unknown, ApiError>

/**
 * Role → decode → run, for any call of a caller (an operation, or a method of the session's own),
 * with the synchronous steps taken at once: a refusal of the role or of the input comes back as a
 * `Left` (an `Either` is an Effect too, so any caller can use the answer as it is), and only the run
 * is left to an Effect. A caller that checks `Either.isEither` answers those refusals without a fiber.
 */
export const startCall = <A, I, B, E>(
  caller: Caller,
  access: Access,
  schema: Schema.Schema<A, I>,
  input: RawInput,
  run: (decoded: A) => Effect.Effect<B, E>
): Effect.Effect<B, E | ApiError> => {
  if (!mayAccess(caller.roles, access)) return Either.left(apiError("insufficientPermissions"))
  const decoded = Either.flatMap(input(), (raw) => decodeRequestEither(schema, raw))
  return Either.isLeft(decoded) ? Either.left(decoded.left) : run(decoded.right)
}

/**
 * One operation of the shared table, called by `caller`, its synchronous steps taken at once
 * (`startCall`), and its answer too when memory alone gives it (`peek`, an `Either`): a JSON-RPC
 * call of a cached read is then answered in the transport's callback, as REST answers it without
 * a fiber (`runOperationNow`). Otherwise `run`.
 */
export const startOperation = (
  op: Operation,
  engine: EngineService,
  caller: Caller,
  input: RawInput
): Effect.Effect<unknown, ApiError> =>
  startCall(
    caller,
    op.access,
    op.input,
    input,
    op.peek === undefined
      ? (decoded) => op.run(engine, caller, decoded)
      : (decoded) => op.peek!(engine, caller, decoded) ?? op.run(engine, caller, decoded)
  )

/** One operation of the shared table, called by `caller`. */
export const runOperation = (
  op: Operation,
  engine: EngineService,
  caller: Caller,
  input: RawInput
): Effect.Effect<unknown, ApiError> => Effect.suspend(() => startOperation(op, engine, caller, input))

/**
 * `runOperation` made synchronously, for an operation that can answer from memory (`peek`): the
 * same role → decode → run, the same answers. Undefined when only `runOperation` can answer.
 * `decode` is the operation's schema decode (a caller may remember its answers: it is pure).
 */
export const runOperationNow = (
  op: Operation,
  engine: EngineService,
  caller: Caller,
  input: RawInput,
  decode: (raw: unknown) => Either.Either<unknown, ApiError> = (raw) => decodeRequestEither(op.input, raw)
): Either.Either<unknown, ApiError> | undefined => {
  if (op.peek === undefined) return undefined
  if (!mayAccess(caller.roles, op.access)) return Either.left(apiError("insufficientPermissions"))
  const decoded = Either.flatMap(input(), decode)
  return Either.isLeft(decoded) ? decoded : op.peek(engine, caller, decoded.right)
}
