import { Context, Effect, Layer, Option } from "effect"
import { AccountStore } from "../accounts/AccountStore.js"
import type { CreateExchangeCredentialsRequest } from "../api/AccountRequests.js"
import { requireRole } from "../auth/Roles.js"
import { type ApiError, apiError } from "../domain/Errors.js"
import type { SettlementOption } from "../domain/Primitives.js"
import type { Caller } from "../rfq/RfqRecord.js"
import { credentialsAad, SecretBox } from "../security/SecretBox.js"

const exchanges: Record<SettlementOption, { readonly exchangeId: number; readonly name: string }> = {
  DBT: { exchangeId: 1, name: "DBT" },
  BULL: { exchangeId: 2, name: "BULL" }
}

/** A desk's exchange credentials, as `GET /account/exchange-credentials` lists them. */
export interface CredentialsListing {
  alias: string
  credentialsId: number
  exchange: string
  exchangeId: number
  exchangeShortCode: SettlementOption
  isExchangeDefault: boolean
}

/** One of the desk's credentials with its secret, as `GET /account/exchange-credentials/{id}`. */
export interface CredentialsDetail {
  alias: string
  clientId: string
  clientSecret: string
  credentialsId: number
  exchangeId: number
  isExchangeDefault: boolean
}

/** The account endpoints (the desk's credentials and counterparties) and the makers directory. */
export interface AccountsService {
  /** The makers a taker may invite, with the venues each can settle on. */
  readonly makers: (
    caller: Caller
  ) => Effect.Effect<
    Array<{ makerId: string; name: string; settlementOptions: Array<SettlementOption> }>,
    ApiError
  >
  readonly exchangeCredentials: {
    readonly list: (caller: Caller) => Effect.Effect<Array<CredentialsListing>, ApiError>
    readonly get: (caller: Caller, id: number) => Effect.Effect<CredentialsDetail, ApiError>
    readonly create: (
      caller: Caller,
      req: CreateExchangeCredentialsRequest
    ) => Effect.Effect<{ credentialsId: number }, ApiError>
    readonly delete: (caller: Caller, id: number) => Effect.Effect<{ credentialsId: number }, ApiError>
  }
  readonly otcCounterparties: (caller: Caller) => Effect.Effect<Array<{ id: number; name: string }>, ApiError>
}

export class Accounts extends Context.Tag("rfq/Accounts")<Accounts, AccountsService>() {}

const make = Effect.gen(function* () {
  const accounts = yield* AccountStore
  const secrets = yield* SecretBox

  const makers = Effect.fn("Engine.makers")(function* (caller: Caller) {
    yield* requireRole(caller, "read")
    const rows = yield* accounts.makers
    return yield* Effect.forEach(rows, (m) =>
      Effect.map(accounts.credentialsOfDesk(m.deskId), (creds) => ({
        makerId: m.makerId,
        name: m.name,
        settlementOptions: (["BULL", "DBT"] as const).filter((o) => creds.some((c) => c.exchange === o))
      }))
    )
  })

  const credentialsList = Effect.fn("Engine.credentialsList")(function* (caller: Caller) {
    yield* requireRole(caller, "account")
    const rows = yield* accounts.credentialsOfDesk(caller.deskId, { fresh: true })
    return rows.map((r) => ({
      alias: r.alias,
      credentialsId: r.id,
      exchange: exchanges[r.exchange].name,
      exchangeId: exchanges[r.exchange].exchangeId,
      exchangeShortCode: r.exchange,
      isExchangeDefault: r.isExchangeDefault
    }))
  })

  const credentialsGet = Effect.fn("Engine.credentialsGet")(function* (caller: Caller, id: number) {
    yield* requireRole(caller, "account")
    const row = yield* accounts.credentials(id, { fresh: true })
    if (Option.isNone(row) || row.value.deskId !== caller.deskId)
      return yield* Effect.fail(apiError("credentialsNotFound"))
    const secret = yield* secrets.open(
      row.value.clientSecretSealed,
      credentialsAad(row.value.deskId, row.value.alias)
    )
    return {
      alias: row.value.alias,
      clientId: row.value.clientId,
      clientSecret: secret,
      credentialsId: row.value.id,
      exchangeId: exchanges[row.value.exchange].exchangeId,
      isExchangeDefault: row.value.isExchangeDefault
    }
  })

  const credentialsCreate = Effect.fn("Engine.credentialsCreate")(function* (
    caller: Caller,
    req: CreateExchangeCredentialsRequest
  ) {
    yield* requireRole(caller, "account")
    const sealed = yield* secrets.seal(req.clientSecret, credentialsAad(caller.deskId, req.alias))
    const id = yield* accounts.insertCredentials({
      deskId: caller.deskId,
      alias: req.alias,
      exchange: req.exchange,
      clientId: req.clientId,
      clientSecretSealed: sealed,
      isExchangeDefault: req.isExchangeDefault ?? false
    })
    return { credentialsId: id }
  })

  const credentialsDelete = Effect.fn("Engine.credentialsDelete")(function* (caller: Caller, id: number) {
    yield* requireRole(caller, "account")
    const deleted = yield* accounts.deleteCredentials(caller.deskId, id)
    if (!deleted) return yield* Effect.fail(apiError("credentialsNotFound"))
    return { credentialsId: id }
  })

  const otcCounterparties = Effect.fn("Engine.otcCounterparties")(function* (caller: Caller) {
    yield* requireRole(caller, "account")
    const rows = yield* accounts.counterparties(caller.deskId)
    return rows.map((r) => ({ id: r.id, name: r.name }))
  })

  const service: AccountsService = {
    makers,
    exchangeCredentials: {
      list: credentialsList,
      get: credentialsGet,
      create: credentialsCreate,
      delete: credentialsDelete
    },
    otcCounterparties
  }
  return service
})

export const AccountsLive: Layer.Layer<Accounts, never, AccountStore | SecretBox> = Layer.effect(
  Accounts,
  make
)
