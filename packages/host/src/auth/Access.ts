import { type ApiError, apiError, type Caller } from "@rfq/engine"
import { Effect } from "effect"

/**
 * What an operation needs (contract: `trader` may do everything, `viewer` only reads):
 * - `read`: a GET outside the account endpoints, open to either role;
 * - `write`: anything that changes state;
 * - `account`: the account endpoints, which the spec reserves to `trader` even for reading.
 * A user with no role at all may do nothing.
 */
export type Access = "read" | "write" | "account"

export const mayAccess = (roles: Caller["roles"], access: Access): boolean =>
  roles.includes("trader") || (access === "read" && roles.includes("viewer"))

/** Fails with 403 `insufficient permissions` when the caller's roles do not allow `access`. */
export const requireRole = (caller: Pick<Caller, "roles">, access: Access): Effect.Effect<void, ApiError> =>
  mayAccess(caller.roles, access) ? Effect.void : Effect.fail(apiError("insufficientPermissions"))
