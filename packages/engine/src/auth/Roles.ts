import { Effect } from "effect"
import { type ApiError, apiError } from "../domain/Errors.js"
import type { Caller } from "../rfq/RfqRecord.js"

/**
 * The one role check of the service (contract: `trader` may do everything, `viewer` only reads).
 * What an operation needs:
 * - `read`: a read outside the account endpoints, open to either role;
 * - `write`: anything that changes state;
 * - `account`: the account endpoints, which the spec reserves to `trader` even for reading.
 * A user with no role at all may do nothing. The engine's commands and queries call it; the host
 * only authenticates.
 */
export type Access = "read" | "write" | "account"

export const mayAccess = (roles: Caller["roles"], access: Access): boolean =>
  roles.includes("trader") || (access === "read" && roles.includes("viewer"))

/** Fails with 403 `insufficient permissions` when the caller's roles do not allow `access`. */
export const requireRole = (caller: Pick<Caller, "roles">, access: Access): Effect.Effect<void, ApiError> =>
  mayAccess(caller.roles, access) ? Effect.void : Effect.fail(apiError("insufficientPermissions"))

/**
 * A maker command (quote create, update, delete, cancel): a desk that is not a maker learns nothing
 * (`rfq not found`, as for an RFQ it cannot see); a maker desk's user needs `write`.
 */
export const requireMaker = (caller: Caller): Effect.Effect<void, ApiError> =>
  caller.makerId === undefined ? Effect.fail(apiError("rfqNotFound")) : requireRole(caller, "write")
