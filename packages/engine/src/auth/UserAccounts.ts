import type { SqlError } from "@effect/sql/SqlError"
import { Context, type Effect, type Option } from "effect"
import type { Caller } from "../rfq/RfqRecord.js"

/**
 * Users, their API clients and the refresh-token families issued to them: what authentication reads
 * and writes, and the rules that live in those tables (one-time refresh tokens, a replay revoking
 * its family, an account's standing). The host signs and verifies the tokens and hashes secrets;
 * the SQL is `SqlUserAccounts.ts`. SQL failures of the login path are defects (no client can act on
 * them, the request answers 500); the provisioning commands keep them for the operator to read.
 */

export type UserRole = Caller["roles"][number]

export interface ClientAccount {
  readonly clientId: string
  readonly secretHash: string
  readonly clientActive: boolean
  readonly userId: number
  readonly userActive: boolean
  readonly deskId: number
  readonly roles: ReadonlyArray<UserRole>
  readonly makerId?: string | undefined
}

/** Whether a token's holder may still act: user and client active, refresh family not revoked. */
export interface AccountStatus {
  readonly active: boolean
  readonly familyRevoked: boolean
}

/** What a token names of its holder: the user, and the client and refresh family when it has them. */
export interface StatusKey {
  readonly userId: number
  readonly clientId?: string | undefined
  readonly family?: string | undefined
}

/** A stored refresh token: the claims the host signs into it, and its row's expiry. */
export interface RefreshToken {
  readonly jti: string
  readonly family: string
  readonly userId: number
  readonly clientId: string
  /** Unix milliseconds, `REFRESH_TOKEN_SECONDS` after issue (whole seconds, as the token's `exp`). */
  readonly expiresAt: number
}

/**
 * The outcome of presenting refresh token `jti`:
 * - `Rotated`: it was live; it is now used and its successor `next` (same family) is stored;
 * - `Replayed`: it had been used or revoked already; its whole family is now revoked;
 * - `Expired`: its row says it has expired (nothing changed);
 * - `Unknown`: no such row (never issued here, or cleaned up).
 */
export type RotateOutcome =
  | { readonly _tag: "Rotated"; readonly next: RefreshToken }
  | { readonly _tag: "Replayed"; readonly family: string }
  | { readonly _tag: "Expired" }
  | { readonly _tag: "Unknown" }

/** A new API client: its secret is shown once; only its hash is stored. */
export interface NewClient {
  readonly clientId: string
  readonly clientSecret: string
}

/** A user as the operator lists it: never a secret or its hash. */
export interface UserListing {
  readonly userId: number
  readonly name: string
  readonly desk: string
  readonly roles: ReadonlyArray<UserRole>
  readonly active: boolean
  /** The user's API clients, by creation. */
  readonly clients: ReadonlyArray<{ readonly clientId: string; readonly active: boolean }>
}

export interface UserAccountsService {
  readonly clientAccount: (clientId: string) => Effect.Effect<Option.Option<ClientAccount>>
  /** `clientId` and `family` are checked when given (the token names them). */
  readonly accountStatus: (
    userId: number,
    clientId: string | undefined,
    family: string | undefined
  ) => Effect.Effect<AccountStatus>
  /**
   * `accountStatus` of many token holders at once, in three queries per chunk of keys, whatever
   * their number (the sessions' periodic recheck). Answers in the order of `keys`.
   */
  readonly accountStatuses: (keys: ReadonlyArray<StatusKey>) => Effect.Effect<ReadonlyArray<AccountStatus>>
  /** Stores the first refresh token of a new family for the client's user, issued at `now`. */
  readonly startRefreshFamily: (
    holder: { readonly userId: number; readonly clientId: string },
    now: number
  ) => Effect.Effect<RefreshToken>
  /**
   * Consumes refresh token `jti` and stores its successor in one transaction. Of several
   * concurrent calls for the same `jti` exactly one gets `Rotated`: the conditional UPDATE takes
   * the row lock, and the others find it used once the winner commits (and revoke the family).
   */
  readonly rotateRefreshToken: (jti: string, now: number) => Effect.Effect<RotateOutcome>
  /** Revokes every live token of the family; answers how many rows changed. */
  readonly revokeFamily: (family: string, now: number) => Effect.Effect<number>
  /** Deletes rows that expired before `before`; answers how many. */
  readonly deleteExpiredRefreshTokens: (before: number) => Effect.Effect<number>
  /** A user of the desk with one role; answers its id. */
  readonly createUser: (deskId: number, name: string, role: UserRole) => Effect.Effect<number, SqlError>
  /**
   * An API client of the user with a random id and secret; the secret is stored as `hashSecret`
   * makes it (the host owns the scheme).
   */
  readonly createClient: (
    userId: number,
    hashSecret: (secret: string) => Effect.Effect<string>
  ) => Effect.Effect<NewClient, SqlError>
  /** False when there is no such client. Its tokens stop working within the hosts' status cache time. */
  readonly deactivateClient: (clientId: string) => Effect.Effect<boolean, SqlError>
  /** False when there is no such user. Every client of the user stops working, as above. */
  readonly deactivateUser: (userId: number) => Effect.Effect<boolean, SqlError>
  /** Every user with desk, roles, standing and client ids, by id (optionally of one desk). */
  readonly listUsers: (deskId?: number) => Effect.Effect<ReadonlyArray<UserListing>, SqlError>
}

export class UserAccounts extends Context.Tag("rfq/auth/UserAccounts")<UserAccounts, UserAccountsService>() {}
