import { Context, type Effect, type Option } from "effect"
import type { ApiError } from "../domain/Errors.js"
import type { SettlementOption } from "../domain/Primitives.js"

/** Exchange credentials as stored: the client secret only ever sealed (see SecretBox). */
export interface CredentialsRow {
  readonly id: number
  readonly deskId: number
  readonly alias: string
  readonly exchange: SettlementOption
  readonly clientId: string
  readonly clientSecretSealed: Uint8Array
  readonly isExchangeDefault: boolean
}

export interface MakerRow {
  readonly makerId: string
  readonly deskId: number
  readonly name: string
}

export interface CounterpartyRow {
  /** The counterparty desk's id. */
  readonly id: number
  readonly name: string
  /** Whether that desk lets the caller's desk use its credentials in bulk block trades. */
  readonly allowsBlockTrade: boolean
}

export interface NewCredentials {
  readonly deskId: number
  readonly alias: string
  readonly exchange: SettlementOption
  readonly clientId: string
  readonly clientSecretSealed: Uint8Array
  readonly isExchangeDefault: boolean
}

/**
 * Desks' reference data: exchange credentials, makers and OTC counterparties, and the one-time
 * nonces of bulk block trades. Credentials are desk-scoped: every lookup takes the desk.
 *
 * Reads may be served from a short-lived cache (an implementation's choice; the SQL store keeps
 * one, cleared by its own writes). `{ fresh: true }` reads storage itself: the account endpoints
 * use it, so a desk always sees its credentials as stored.
 */
export interface ReadOptions {
  readonly fresh?: boolean
}

export interface AccountStoreService {
  readonly credentialsOfDesk: (
    deskId: number,
    options?: ReadOptions
  ) => Effect.Effect<ReadonlyArray<CredentialsRow>>
  /** Credentials by id, whichever desk holds them (callers check the desk). */
  readonly credentials: (id: number, options?: ReadOptions) => Effect.Effect<Option.Option<CredentialsRow>>
  readonly credentialsByAlias: (deskId: number, alias: string) => Effect.Effect<Option.Option<CredentialsRow>>
  /** Fails with `exchange credentials with the same alias already exists` on a duplicate alias. */
  readonly insertCredentials: (row: NewCredentials) => Effect.Effect<number, ApiError>
  /** True when a row of that desk was deleted. */
  readonly deleteCredentials: (deskId: number, id: number) => Effect.Effect<boolean>
  readonly makers: Effect.Effect<ReadonlyArray<MakerRow>>
  readonly makerOfDesk: (deskId: number) => Effect.Effect<Option.Option<MakerRow>>
  readonly counterparties: (deskId: number) => Effect.Effect<ReadonlyArray<CounterpartyRow>>
  /**
   * Claims a bulk block trade nonce for the desk, forever, and numbers the block trade: the id is
   * ours (unique, persisted with the claim). None when the nonce was used before.
   */
  readonly claimNonce: (deskId: number, nonce: string) => Effect.Effect<Option.Option<number>>
  /**
   * The tables were written by other means (provisioning through the running host): whatever is
   * cached of them is dropped now, on this host and, with several hosts, on every other one.
   */
  readonly referenceDataChanged: Effect.Effect<void>
  /**
   * Drops what this host has cached of them, and tells no one: for news every host heard already
   * (the admin command's notice to all hosts in multi-host mode, `packages/host/src/shared/StaleReferenceData.ts`).
   */
  readonly forgetReferenceData: Effect.Effect<void>
}

export class AccountStore extends Context.Tag("rfq/AccountStore")<AccountStore, AccountStoreService>() {}
