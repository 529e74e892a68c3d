export const version = "0.1.0"
export * from "./domain/Errors.js"
export * from "./domain/Instrument.js"
export * from "./domain/VenueContract.js"
export * from "./domain/Ratio.js"
export * from "./domain/Strategy.js"
export * from "./domain/QuoteCurrencies.js"
export * from "./domain/Primitives.js"
export * from "./domain/TextCut.js"
export type * from "./rfq/RfqRecord.js"
export * from "./engine/Engine.js"
export * from "./engine/Ownership.js"
export { ActiveQuotes, type ActiveQuote, type ActiveQuotesService } from "./engine/ActiveQuotes.js"
export { Recovery, type RecoveryService } from "./engine/Recovery.js"
export * from "./auth/Roles.js"
export * from "./services/Events.js"
export {
  AudienceIndex,
  audienceOf,
  type EventAudience,
  type EventInterest
} from "./services/EventAudience.js"
export { Mmp, type MmpService } from "./mmp/Mmp.js"
export { MmpNotices, type MmpNotice, type MmpNoticesService } from "./mmp/MmpNotices.js"
export { MmpStore, type MmpStoreService } from "./mmp/MmpStore.js"
export { renderMmpNotice, noticeCurrency } from "./mmp/MmpChannel.js"
export { Venues, VenueRejection } from "./services/Venues.js"
export type {
  AccountPermissions,
  BlockTradeLeg,
  BlockTradeRequest,
  ExecutedBlockTrade,
  VenueAccount,
  VenueInstrument,
  VenuesService
} from "./services/Venues.js"
export * from "./services/Pricing.js"
export {
  installWaitProbe,
  type WaitPhases,
  type WaitProbe,
  waitProfiling,
  waitSpan
} from "./services/WaitProbe.js"
export * from "./security/SecretBox.js"
export * from "./security/KeyRotation.js"
export * from "./accounts/AccountStore.js"
export * from "./rfq/RfqStore.js"
export * from "./api/Decode.js"
export * from "./api/RfqRequests.js"
export * from "./api/QuoteRequests.js"
export * from "./api/MmpRequests.js"
export * from "./api/MmpResponses.js"
export * from "./api/Queries.js"
export * from "./api/AccountRequests.js"
export * from "./api/AuthRequests.js"
export * from "./api/RfqResponses.js"
export * from "./api/QuoteResponses.js"
export * from "./api/AccountResponses.js"
export * from "./api/AuthResponses.js"
export * from "./api/TradeTapeRequests.js"
export * from "./api/TradeTapeResponses.js"
export * from "./storage/Database.js"
export * from "./storage/Migrations.js"
export * from "./storage/PgliteTemplate.js"
export * from "./storage/SqlErrors.js"
export {
  DEFAULT_STATEMENT_DEADLINE_MS,
  StatementDeadlineExceeded,
  isDeadlineExceeded,
  REQUEST_SLACK_MS,
  withRequestBudget,
  withStatementDeadline
} from "./storage/StatementDeadline.js"
export {
  SimulatedVenues,
  type SimulatedVenuesOptions,
  type InMemoryVenuesOptions
} from "./venues/SimulatedVenues.js"
export * from "./venues/VenueAccounts.js"
export { VenueLedger, type VenueLedgerService, type BlockTradeBooking } from "./venues/VenueLedger.js"
export { SqlVenueLedger } from "./venues/SqlVenueLedger.js"
export {
  venueParameters,
  priceBandRules,
  priceBand,
  strikeGrid,
  type PriceBand,
  type KindParameters,
  type BandRule
} from "./venues/VenueParameters.js"
export { listedExpiries, type ListedExpiries } from "./venues/ExpirySchedule.js"
export {
  SimulatedPricing,
  type SimulatedPricingOptions,
  DEFAULT_PRICING_SEED
} from "./pricing/SimulatedPricing.js"
export * from "./engine/EngineLayer.js"
export * from "./domain/Decimal.js"
export * from "./domain/Split.js"
export * from "./domain/StructurePrice.js"
export * from "./domain/LegPrices.js"
export * from "./storage/DemoSeed.js"
export * from "./auth/TokenLifetimes.js"
export * from "./auth/UserAccounts.js"
export { makeUserAccounts, UserAccountsLive } from "./auth/SqlUserAccounts.js"
export * as Provisioning from "./accounts/Provisioning.js"
export { makeSharedEngineLayer } from "./cluster/SharedEngineLayer.js"
export { NatsEventsLive, type NatsEventsOptions } from "./cluster/NatsEvents.js"
export { NatsUnavailable, natsNames } from "./cluster/NatsConnection.js"
export { ClusterBus, type ClusterBusService } from "./cluster/ClusterBus.js"
export { RfqEntity } from "./cluster/RfqEntity.js"
export { shardOf } from "./cluster/ClusterOwnership.js"
export { lockSchemaStartup, ADVISORY_LOCK_NAMESPACE } from "./storage/StartupLock.js"
export * from "./api/Endpoints.js"
