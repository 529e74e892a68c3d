import { Context, Effect, Layer } from "effect"
import type { SettlementOption } from "../domain/Primitives.js"
import type { AccountPermissions } from "../services/Venues.js"

/**
 * The simulated venues' own record of exchange accounts (API keys), by venue and clientId: what
 * each may do and how it behaves. An account nobody registered has every permission and behaves
 * normally, so any credentials work against the simulation unless a test or the demo seed says
 * otherwise. Registrations live in memory: register them at every start, not only when seeding.
 */
export interface AccountBehaviour {
  /** Every execution by this account fails with this reason (simulation still passes). */
  readonly failExecution?: string
}

export interface AccountRegistration {
  readonly venue: SettlementOption
  readonly clientId: string
  /** Missing scopes default to granted. */
  readonly permissions?: Partial<AccountPermissions>
  readonly behaviour?: AccountBehaviour
}

export interface SimulatedAccount {
  readonly permissions: AccountPermissions
  readonly behaviour: AccountBehaviour
}

export const fullPermissions: AccountPermissions = { blockRfq: true, blockTrade: true }

const normalAccount: SimulatedAccount = { permissions: fullPermissions, behaviour: {} }

export interface VenueAccountsService {
  /** Registers or replaces an account's configuration. */
  readonly register: (account: AccountRegistration) => Effect.Effect<void>
  readonly lookup: (venue: SettlementOption, clientId: string) => Effect.Effect<SimulatedAccount>
}

const keyOf = (venue: SettlementOption, clientId: string): string => `${venue}|${clientId}`

const toAccount = (r: AccountRegistration): SimulatedAccount => ({
  permissions: { ...fullPermissions, ...r.permissions },
  behaviour: r.behaviour ?? {}
})

export const makeVenueAccounts = (initial: ReadonlyArray<AccountRegistration> = []): VenueAccountsService => {
  const accounts = new Map<string, SimulatedAccount>(
    initial.map((r) => [keyOf(r.venue, r.clientId), toAccount(r)])
  )
  return {
    register: (r) => Effect.sync(() => void accounts.set(keyOf(r.venue, r.clientId), toAccount(r))),
    lookup: (venue, clientId) => Effect.sync(() => accounts.get(keyOf(venue, clientId)) ?? normalAccount)
  }
}

export class VenueAccounts extends Context.Tag("rfq/VenueAccounts")<VenueAccounts, VenueAccountsService>() {
  /** A registry holding `initial` registrations (more can be added with `register`). */
  static readonly layer = (initial: ReadonlyArray<AccountRegistration> = []): Layer.Layer<VenueAccounts> =>
    Layer.sync(VenueAccounts, () => makeVenueAccounts(initial))
}
