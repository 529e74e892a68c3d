/**
 * `@rfq/engine/api`: what a client of the service needs and nothing that runs the service: the
 * operation table (`Endpoints.ts`), every request and answer schema, the error catalog, and the
 * pure rules a screen checks as the user types (strategy and description of a structure, the split
 * rules). It imports `effect` and nothing from Node, so a browser bundle can take it (the typed
 * client `@rfq/client` and the console do).
 */
export * from "./AccountRequests.js"
export * from "./AccountResponses.js"
export * from "./AuthRequests.js"
export * from "./AuthResponses.js"
export * from "./Decode.js"
export * from "./Endpoints.js"
export * from "./MmpRequests.js"
export * from "./MmpResponses.js"
export * from "./Names.js"
export * from "./Queries.js"
export * from "./QuoteRequests.js"
export * from "./QuoteResponses.js"
export * from "./RfqRequests.js"
export * from "./RfqResponses.js"
export * from "./TradeTapeRequests.js"
export * from "./TradeTapeResponses.js"
export { ApiError, catalog, type ErrorKey } from "../domain/Errors.js"
export { BaseCurrency } from "../domain/Primitives.js"
export { cutText } from "../domain/TextCut.js"
export { classifyStrategy, describeStructure } from "../domain/Strategy.js"
export { parseInstrument } from "../domain/Instrument.js"
export { settlementAccountsIssues } from "../rfq/SplitRules.js"
